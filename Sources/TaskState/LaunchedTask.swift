import FoundationEssentials

/// A launched task that has not finished yet: `tasks/<app>/<identifier>.json`.
///
/// Finished tasks leave no file; their story is in the event log.
public struct LaunchedTask: Codable, Hashable, Sendable {
    /// Where a task is in its life.
    public enum State: String, Codable, Sendable {
        /// Running within its budget.
        case running
        /// Its budget ran out: the app was told and has until `killDeadline` to complete.
        case expiring
    }

    public var app: Identifier
    public var identifier: Identifier
    public var kind: TaskKind
    public var state: State
    /// Why the app was launched: `appRefresh`, `processing`, `simulated`, `finishing`.
    public var launchReason: String
    /// Launched by `simulate-launch` rather than by the policy.
    public var simulated: Bool
    /// The process carrying the task.
    public var pid: Int32
    /// The process group the scheduler created for the launch, killed as a whole; `nil` when the
    /// process was not launched by the scheduler (finishing tasks).
    public var processGroup: Int32?
    /// The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a reused
    /// pid is never mistaken for the task's process after a scheduler restart.
    public var processStartTicks: UInt64?
    /// Tasks handed over in one launch share this identifier.
    public var launchID: String
    public var startedAt: Date
    /// When the runtime budget runs out.
    public var deadline: Date
    /// When the task started expiring.
    public var expiringSince: Date?
    /// When an expiring task's process group is killed if it has not completed.
    public var killDeadline: Date?
    /// The signal sent at expiry.
    public var expirationSignal: String
    /// A name given by the app (finishing tasks).
    public var name: String?
    /// The push this task delivers (`remoteNotification` tasks): the app reads its payload here.
    public var push: HeldPush?
    /// Where the launch's output starts in `logs/<app>.log`: the log's size just before the process
    /// was started, where the scheduler wrote the launch's marker line (``LogMarker``). `nil` for a
    /// task handed to a running process, a finishing task, or one recorded before this field existed.
    public var logOffset: Int64?
    /// `true` when the expiry alarm expired the task (its process was signalled and this file
    /// written, outside the journal) and no commit has recorded the expiry yet: a scheduler that
    /// reads it so after a crash records the expiry (its event, the app's count) without a second
    /// signal. Absent otherwise.
    public var unrecordedExpiry: Bool?

    public init(app: Identifier, identifier: Identifier, kind: TaskKind, state: State = .running,
                launchReason: String, simulated: Bool, pid: Int32, processGroup: Int32?,
                processStartTicks: UInt64?, launchID: String, startedAt: Date, deadline: Date,
                expiringSince: Date? = nil, killDeadline: Date? = nil,
                expirationSignal: String = "SIGUSR1", name: String? = nil, push: HeldPush? = nil, logOffset: Int64? = nil) {
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.state = state
        self.launchReason = launchReason
        self.simulated = simulated
        self.pid = pid
        self.processGroup = processGroup
        self.processStartTicks = processStartTicks
        self.launchID = launchID
        self.startedAt = startedAt
        self.deadline = deadline
        self.expiringSince = expiringSince
        self.killDeadline = killDeadline
        self.expirationSignal = expirationSignal
        self.name = name
        self.push = push
        self.logOffset = logOffset
    }

    public var key: TaskKey { TaskKey(app: app, identifier: identifier) }

    /// Seconds of budget left at `now` (never negative).
    public func remaining(at now: Date) -> TimeInterval { max(0, deadline.timeIntervalSince(now)) }
}
