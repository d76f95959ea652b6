import ArgumentParser
import FoundationEssentials
import Glibc
import SchedulerCore
import TaskState

/// Sends commands the way the contract says: durable before returning; the outcome printed when
/// a scheduler runs; checked against the current state and refused at once when none runs.
struct CommandSender {
    let locations: LocationOptions
    var timeout: TimeInterval = 10

    /// Sends `action` and prints the outcome. Throws the contract's exit code on refusal.
    @discardableResult
    func send(_ action: CommandAction, needsScheduler: Bool = false, quiet: Bool = false) throws -> CommandOutcome? {
        let paths = locations.paths
        let channel = CommandChannel(paths: paths)
        let now = Date()
        let launchToken = try Self.launchToken()
        let command = Command(issuedAt: now, issuerPID: getpid(), launchToken: launchToken, action: action)
        if channel.schedulerPID == nil {
            if needsScheduler {
                printError("bgtaskd is not running for \(paths.root); \(action.name.rawValue) needs a running scheduler")
                throw BGCtl.Exit.notRunning
            }
            // Check it now against what is on disk, so a command that would be refused is refused
            // here and does not sit in the inbox.
            if let refusal = try offlineCheck(command, now: now) {
                printError("\(refusal.name): \(refusal.message)")
                throw BGCtl.Exit.refused
            }
        }
        let delivery: CommandChannel.Delivery
        do {
            delivery = try channel.send(command, timeout: timeout)
        } catch {
            printError("\(error)")
            throw BGCtl.Exit.localFailure
        }
        switch delivery {
        case .applied(let outcome):
            if let error = outcome.error {
                printError("\(error.name): \(error.message)")
                throw BGCtl.Exit.refused
            }
            if !quiet, let message = outcome.message { printLine(message) }
            return outcome
        case .queued:
            print("queued: bgtaskd is not running; the command will be applied when it starts")
            return nil
        case .noAnswer:
            printError("bgtaskd did not answer within \(Int(timeout)) s; the command stays queued in \(paths.inboxNew)")
            throw BGCtl.Exit.notRunning
        }
    }

    /// `BGTASK_LAUNCH_TOKEN`, which a handler's script inherits from its launch: the scheduler
    /// then lets the command act on that launch's app only. Unset or empty, `bgctl` acts as the user.
    static func launchToken(environment: EnvironmentVariables = .process) throws -> LaunchToken? {
        switch LaunchToken.from(environment: environment) {
        case .success(let token):
            return token
        case .failure(let error):
            printError("\(LaunchToken.environmentVariable) is not usable: \(error); unset it to act as the user")
            throw BGCtl.Exit.usage
        }
    }

    private func offlineCheck(_ command: Command, now: Date) throws -> CommandOutcome.Refusal? {
        do {
            return try Self.offlineRefusal(command, paths: locations.paths, configDirectory: locations.configDirectory, now: now)
        } catch {
            printError("bad settings file \(error)")
            throw BGCtl.Exit.localFailure
        }
    }

    /// The refusal the scheduler would give `command` against what is on disk now (for when no
    /// scheduler runs), or `nil`. Throws when the settings file is bad.
    static func offlineRefusal(_ command: Command, paths: StatePaths, configDirectory: String, now: Date) throws(SettingsError) -> CommandOutcome.Refusal? {
        try offlineRefusals([command], paths: paths, configDirectory: configDirectory, now: now)[0]
    }

    /// The refusals the scheduler would give `commands`, applied in order to what is on disk now
    /// (each sees the ones before it, as in the scheduler). Throws when the settings file is bad.
    static func offlineRefusals(_ commands: [Command], paths: StatePaths, configDirectory: String,
                                now: Date) throws(SettingsError) -> [CommandOutcome.Refusal?] {
        let settings = try SchedulerSettings.load(configDirectory: configDirectory)
        let snapshot = StateSnapshot.load(paths)
        var state = SchedulerState(reading: snapshot, settings: settings,
                                   catalog: ManifestCatalog.load(from: "\(configDirectory)/apps"), now: now)
        return commands.map { command in
            // The token's claim is taken on trust here (only the scheduler holds the key to check
            // it): a command for another app is refused now rather than queued to be refused later.
            if let token = command.launchToken, let refusal = state.launchScopeRefusal(of: command, launchedFor: token.app) {
                return refusal.refusal
            }
            return state.apply(command, now: now).outcome.error
        }
    }
}
