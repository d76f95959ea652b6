import FoundationEssentials

/// One line of the event log (`events.jsonl`): what happened, when, to what.
public struct Event: Codable, Hashable, Sendable {
    /// What happened.
    public enum Kind: String, Codable, Sendable, CaseIterable {
        case daemonStarted, daemonStopped
        case submitted, replaced, cancelled, refused
        case launched, launchFailed, adopted, interrupted, attached, detached
        case completed, exited, expired, killed, throttled
        case appEnabled, appDisabled, manifestLoaded, manifestError
        case conditionsChanged, quarantined, commandRejected
        case transferCreated, transferStarted, transferCompleted, transferFailed, transferRetrying
        case transferPaused, transferResumed, transferCancelled
        /// A download's held bytes could not be resumed (RFC 9110 rules) and it starts from byte 0.
        case transferRestarted
        /// The scheduler made a new launch key (`launch.key`): at first start, or because the kept
        /// one was missing or unusable. Launch tokens given out before no longer verify.
        case launchKeyCreated
        /// A push arrived for an app (delivered at once or held).
        case pushReceived
        /// A push was handed to the app's process or launched it (reason `remoteNotification`).
        case pushDelivered
        /// A held push was replaced by a newer one of the same app (and collapse id).
        case pushCoalesced
        /// A held push passed its expiration before it could be delivered.
        case pushExpired
        /// A push was not delivered and never will be: the app is switched off, `--expiration 0`
        /// found it blocked, a duplicate, or its launch failed.
        case pushDropped
        /// A push subscription connected, failed or recovered (the reason says which).
        case pushSubscription
        /// Uses of an app were recorded (`appUsed`), for usage prediction.
        case appUsed
        /// What was left of a launch whose tasks were all finished was ended (SIGTERM, then
        /// SIGKILL after the grace); the message names the pids.
        case leftoverEnded
        /// An app reported an incoming call (`reportCall`), and how it showed it to the user.
        case callReported
        /// An app did not report a call within `voipReportSeconds` of a VoIP push: a strike (its
        /// process is killed with reason `voipNotReported`).
        case voipStrike
        /// An app failed to report `voipStrikes` times in a row: its VoIP pushes are dropped.
        case voipBlocked
        /// A person used an app whose VoIP pushes were dropped: it gets them again.
        case voipUnblocked
        /// A delayed transfer whose app wants to be asked (`willBeginDelayedRequest`) is ready to
        /// begin: the scheduler asked the app, and waits for its answer.
        case transferAsked
        /// The app answered: `reason` is `continue`, `cancel` or `new`.
        case transferAnswered
        /// No answer came in time: the transfer begins with its request as made.
        case transferAnswerTimedOut
        /// An app's log (`logs/<app>.log`) could not be rotated or written (a full disk, a file
        /// that is not a regular file): the launch goes on, its output may be lost.
        case appLogProblem
        /// The machine was suspended or its wall clock was set (`reason` `suspend` or
        /// `clockJump`): running tasks' deadlines moved with the wall clock, so budgets count
        /// awake time; the message says by how much and what came due meanwhile.
        case clockChanged
        /// logind announced a suspend (`PrepareForSleep`): the scheduler wrote its state and
        /// synced it, then released its sleep inhibitor. The resume is a `clockChanged`.
        case preparingForSleep
        /// The inbox folder could not be listed (`reason`: the error): its commands wait there and
        /// the scheduler runs on, listing it again on a timer. Recorded once per run of failures.
        case inboxUnreadable
    }

    public var time: Date
    public var type: Kind
    public var app: Identifier?
    public var identifier: Identifier?
    public var kind: TaskKind?
    public var pid: Int32?
    /// The command that caused it.
    public var command: String?
    /// Launch reason, refusal name, signal, ... depending on the event.
    public var reason: String?
    /// One readable line.
    public var message: String
    /// For `launched` and `pushDelivered` events of a process the scheduler started: where the
    /// launch's output starts in `logs/<app>.log` (see ``LaunchedTask/logOffset``).
    public var logOffset: Int64?
    /// For `completed`, `expired` and `killed` events of a launch the resource monitor measured:
    /// CPU seconds its process tree used so far (``LaunchResources/cpuSeconds``).
    public var cpuSeconds: Double?
    /// With ``cpuSeconds``: the most memory its tree held, in bytes.
    public var peakMemoryBytes: Int64?

    public init(time: Date, type: Kind, app: Identifier? = nil, identifier: Identifier? = nil,
                kind: TaskKind? = nil, pid: Int32? = nil, command: String? = nil, reason: String? = nil,
                message: String, logOffset: Int64? = nil, cpuSeconds: Double? = nil, peakMemoryBytes: Int64? = nil) {
        self.time = time
        self.type = type
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.pid = pid
        self.command = command
        self.reason = reason
        self.message = message
        self.logOffset = logOffset
        self.cpuSeconds = cpuSeconds
        self.peakMemoryBytes = peakMemoryBytes
    }
}
