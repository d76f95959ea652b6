import FoundationEssentials
import SchedulerCore
import TaskState

/// The scheduler's check of a command's launch token, before the policy applies it: a token this
/// scheduler's key did not make is refused, and a verified one limits the command to its app
/// (``SchedulerState/launchScopeRefusal(of:launchedFor:)``). A command without one acts as the user.
extension SchedulerDaemon {
    /// The launch key kept in the state directory (made when missing or unusable), and the events
    /// that say so. A key that cannot be written stops the start: tokens could not be checked.
    static func keptLaunchKey(paths: StatePaths, now: Date) throws(StartError) -> (key: LaunchKey, events: [Event]) {
        do {
            return try LaunchKey.load(paths: paths, now: now)
        } catch {
            throw .state("cannot keep a launch key in \(paths.launchKey): \(error)")
        }
    }

    /// Why `command` is refused for its launch token; `nil` when it carries none, or a verified
    /// one for the app it acts on.
    func launchTokenRefusal(of command: Command) -> SchedulerError? {
        guard let token = command.launchToken else { return nil }
        guard launcher.launchKey.verifies(token) else {
            return .notPermitted(
                "the command's launch token (\(LaunchToken.environmentVariable)) claims a launch of \(token.app) but was not made by this scheduler (made up, or given out before launch.key was replaced); a person acts as the user without one")
        }
        return state.launchScopeRefusal(of: command, launchedFor: token.app)
    }
}
