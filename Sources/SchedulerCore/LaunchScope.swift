import TaskState

/// What a command sent with a verified launch token may do: act on its own app's work only.
///
/// A handler (and `bgctl` run from its script) carries the token of the launch it belongs to, so
/// a mistake or a confusion in it (a wrong `--app`, an identifier another app also uses) cannot
/// cancel, complete or expire another app's work, nor change what every app sees. A command
/// without a token is a person's and acts as the user. This is a guard against accidents, not a
/// boundary against a hostile process of the same user (`docs/security.md`).
extension SchedulerState {
    /// Why `command`, sent by a process launched for `launchApp` (its token verified by the
    /// runtime), may not be applied; `nil` when it acts on `launchApp` alone.
    public func launchScopeRefusal(of command: Command, launchedFor launchApp: Identifier) -> SchedulerError? {
        let sender = "a \(command.action.name.rawValue) from a launch of \(launchApp)"
        let why = "it carries \(launchApp)'s launch token (\(LaunchToken.environmentVariable))"
        func refusal(_ target: Identifier) -> SchedulerError {
            .notPermitted("\(sender) may not act on \(target); \(why)")
        }
        switch command.action {
        case .setConditions, .clearConditions:
            return .notPermitted("\(sender) may not change the conditions, which apply to every app; \(why)")
        case .simulateLaunch(let identifier, nil):
            return refusalForUnnamedApp(pendingApps(with: identifier), launchApp: launchApp, refusal: refusal)
        case .simulateExpiration(let identifier, nil):
            return refusalForUnnamedApp(runningApps(with: identifier), launchApp: launchApp, refusal: refusal)
        default:
            guard let target = command.action.app else { return nil }
            return target == launchApp ? nil : refusal(target)
        }
    }

    /// A simulate command without `--app` acts on whichever app has the identifier: refused when
    /// that is only ever another app. When the launch's own app is among several, the command goes
    /// on and is refused as ambiguous (or acts on the one app) as it would be without a token.
    private func refusalForUnnamedApp(_ apps: Set<Identifier>, launchApp: Identifier,
                                      refusal: (Identifier) -> SchedulerError) -> SchedulerError? {
        guard !apps.isEmpty, !apps.contains(launchApp), let other = apps.min() else { return nil }
        return refusal(other)
    }

    private func pendingApps(with identifier: Identifier) -> Set<Identifier> {
        Set(requests.values.filter { $0.identifier == identifier }.map(\.app))
    }

    private func runningApps(with identifier: Identifier) -> Set<Identifier> {
        Set(tasks.values.filter { $0.identifier == identifier }.map(\.app))
    }
}
