import TaskState

/// Why the scheduler refused a command. `name` is what scripts match on; the description is the
/// one line a person reads.
public enum SchedulerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `BGTaskScheduler.Error.notPermitted`: identifier not permitted, or background mode missing.
    case notPermitted(String)
    /// `BGTaskScheduler.Error.tooManyPendingTaskRequests`.
    case tooManyPendingTaskRequests(String)
    /// `BGTaskScheduler.Error.unavailable`: app switched off, or low power for app refresh.
    case unavailable(String)
    /// No usable manifest for the app.
    case unknownApp(String)
    /// `simulate-launch` of an identifier with no pending request.
    case noSuchRequest(String)
    /// `simulate-expiration` or `complete` of a task that is not running.
    case noSuchTask(String)
    /// `simulate-launch` of a task that is already running.
    case alreadyRunning(String)
    /// `simulate-expiration` of a task that is already expiring.
    case alreadyExpiring(String)
    /// An identifier used by several apps, given without `--app`.
    case ambiguous(String)
    /// A command that makes no sense as given.
    case invalidCommand(String)
    /// The app's process could not be started.
    case launchFailed(String)
    /// `attach` or `begin-finishing` named a pid the scheduler will not signal: itself, pid 1, a
    /// process of another uid, or one neither launched by the scheduler nor running the app's
    /// executable. The runtime decides this (it needs the kernel) and hands the core the reason.
    case notAppProcess(String)
    /// `reportCall` of a call the app already reported: a call is reported once.
    case alreadyReported(String)

    /// The error's code, whose name `bgctl` messages and command outcomes carry.
    public var code: RefusalCode {
        switch self {
        case .notPermitted: return .notPermitted
        case .tooManyPendingTaskRequests: return .tooManyPendingTaskRequests
        case .unavailable: return .unavailable
        case .unknownApp: return .unknownApp
        case .noSuchRequest: return .noSuchRequest
        case .noSuchTask: return .noSuchTask
        case .alreadyRunning: return .alreadyRunning
        case .alreadyExpiring: return .alreadyExpiring
        case .ambiguous: return .ambiguous
        case .invalidCommand: return .invalidCommand
        case .launchFailed: return .launchFailed
        case .notAppProcess: return .notAppProcess
        case .alreadyReported: return .alreadyReported
        }
    }

    /// The error's name, as in `bgctl` messages and command outcomes.
    public var name: String { code.rawValue }

    public var message: String {
        switch self {
        case .notPermitted(let text), .tooManyPendingTaskRequests(let text), .unavailable(let text),
             .unknownApp(let text), .noSuchRequest(let text), .noSuchTask(let text), .alreadyRunning(let text),
             .alreadyExpiring(let text), .ambiguous(let text), .invalidCommand(let text), .launchFailed(let text),
             .notAppProcess(let text), .alreadyReported(let text):
            return text
        }
    }

    public var description: String { "\(name): \(message)" }

    /// The refusal as written in a command outcome.
    public var refusal: CommandOutcome.Refusal { CommandOutcome.Refusal(code, message: message) }
}
