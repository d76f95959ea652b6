import FoundationEssentials
import TaskState

/// Everything the dashboard shows, read from the state directory at one moment. The shell builds
/// it (blockers come from the scheduler's own policy); the view only reads it.
public struct DashboardSnapshot: Sendable {
    /// A pending request, or a held push, and the reasons it is not running.
    public struct PendingRow: Sendable, Hashable {
        /// For a held push, a request of kind `remoteNotification` standing for it (identifier:
        /// the push id; submitted: when it was received), so sorting and filtering treat both alike.
        public var request: PendingRequest
        /// What holds the request: when ``conditionGroup`` is set, only what holds it apart from
        /// the machine's conditions (the group's part is joined when shown, ``blockers(under:)``,
        /// so that a change of conditions edits no row); otherwise all of it.
        public var ownBlockers: [Blocker]
        /// What the request needs of the machine's conditions, for a row that keeps only its own
        /// blockers.
        public var conditionGroup: RequestConditionGroup?
        /// The held push this row shows, if it is one.
        public var push: HeldPush?
        public var pushBlockers: [PushBlocker]
        /// When usage prediction holds the request: when it may launch, and the use it prepares for.
        public var plannedLaunch: Date?
        public var predictedUse: Date?
        /// While the launch is held for other apps' requests coming due: when the hold ends.
        public var coalescingEnds: Date?
        /// The app's week of use (168 likelihoods, Monday 00:00 first, in the scheduler's time
        /// zone) for an app refresh of an app with a usage history: the detail view's heat map.
        public var usageWeek: [Double]?

        /// A row held by `blockers`, all of them.
        public init(request: PendingRequest, blockers: [Blocker], plannedLaunch: Date? = nil, predictedUse: Date? = nil,
                    usageWeek: [Double]? = nil) {
            self.request = request
            ownBlockers = blockers
            conditionGroup = nil
            push = nil
            pushBlockers = []
            self.plannedLaunch = plannedLaunch
            self.predictedUse = predictedUse
            self.usageWeek = usageWeek
        }

        /// A row held by `ownBlockers` and by whatever the conditions of the moment hold
        /// `conditionGroup` for.
        public init(request: PendingRequest, ownBlockers: [Blocker], conditionGroup: RequestConditionGroup,
                    plannedLaunch: Date? = nil, predictedUse: Date? = nil, usageWeek: [Double]? = nil) {
            self.init(request: request, blockers: ownBlockers, plannedLaunch: plannedLaunch, predictedUse: predictedUse,
                      usageWeek: usageWeek)
            self.conditionGroup = conditionGroup
        }

        public init(push: HeldPush, blockers: [PushBlocker]) {
            request = PendingRequest(app: push.app, identifier: push.id, kind: .remoteNotification,
                                     submittedAt: push.receivedAt, commandID: push.commandID)
            ownBlockers = []
            conditionGroup = nil
            self.push = push
            pushBlockers = blockers
        }

        /// Everything that holds the request under the machine's conditions `effective` (the
        /// snapshot's ``DashboardSnapshot/rowConditions``).
        public func blockers(under effective: Conditions) -> [Blocker] {
            conditionGroup.map { $0.blockers(joining: ownBlockers, under: effective) } ?? ownBlockers
        }

        /// What the row waits for under `effective`, in the short words of tables; a wait for a
        /// predicted use says for when (`use ~08:10, refresh 08:00`, UTC like every clock time on
        /// screen).
        public func waitingLabels(under effective: Conditions) -> [String] {
            if push != nil { return pushBlockers.map(\.label) }
            return labels(of: blockers(under: effective))
        }

        /// The labels of `blockers`, some of what holds this row.
        func labels(of blockers: [Blocker]) -> [String] {
            blockers.map { blocker in
                if blocker == .coalescing, let coalescingEnds {
                    return "coalescing \(TextFormat.clock(coalescingEnds, seconds: true))"
                }
                guard blocker.isUsagePlan, let plannedLaunch else { return blocker.label }
                let use = predictedUse.map { "use ~\(TextFormat.clock($0, seconds: false)), " } ?? "\(blocker.label): "
                return use + "refresh " + TextFormat.clock(plannedLaunch, seconds: false)
            }
        }
    }

    public var now: Date
    public var stateDirectory: String
    /// The pid holding the scheduler lock, `nil` when no scheduler runs.
    public var schedulerPID: Int32?
    public var heartbeat: DaemonHeartbeat?
    public var conditions: ConditionsRecord? {
        didSet {
            // The rows join their condition blockers when shown: a filter may now show others.
            if oldValue?.effective != conditions?.effective { rowCache = rowCache.droppingFiltered(.pending) }
        }
    }
    /// The conditions the pending rows' condition blockers are worked out under: the scheduler's
    /// policy reads the same (the defaults of ``Conditions`` before the first probe).
    public var rowConditions: Conditions { conditions?.effective ?? Conditions() }
    public var pending: [PendingRow] {
        get { pendingRows }
        set {
            pendingRows = newValue
            rowCache = RowCache()
        }
    }
    /// `pending`'s storage: ``editPending(_:)`` changes it without dropping the sorted rows.
    var pendingRows: [PendingRow]
    public var tasks: [LaunchedTask] {
        didSet {
            rowCache = rowCache.dropping(.running)
            launchResources = RunningResources(resources, tasks: tasks)
        }
    }
    public var transfers: [TransferRecord] { didSet { rowCache = rowCache.dropping(.transfers) } }
    /// Why each waiting transfer has not started (the scheduler's own policy, like `blockers`).
    public var transferBlockers: [TaskKey: [TransferBlocker]]
    /// Recent events, oldest first.
    public var events: [Event] { didSet { rowCache = rowCache.dropping(.events) } }
    /// Every app known from a manifest, a manifest file or the scheduler's records.
    public var apps: [AppRow] { didSet { rowCache = rowCache.dropping(.apps) } }
    /// Filtered, sorted rows already worked out for this data: a frame asks for them several
    /// times, and with 100 000 requests sorting once per change (not per frame) is what keeps
    /// scrolling smooth. A panel's rows are dropped whenever its data changes, and the pending
    /// rows moved one by one by ``editPending(_:)``.
    var rowCache = RowCache()
    /// One line about what is wrong with the state directory, if anything.
    public var problem: String?
    /// Every app's runs and throttles over the last hours, for the timeline: built from the
    /// event log over a longer window than `events` (see ``RunHistory``).
    public var history = RunHistory()
    /// The machines of `bgtop --host`, in the order given; empty for the local state directory.
    public var hosts: [HostBadge] = []
    /// The resource monitor's last sample (`resources.json`): the running panel's CPU% and MEM.
    public var resources: ResourceReport? {
        didSet {
            rowCache = rowCache.dropping(.running)
            launchResources = RunningResources(resources, tasks: tasks)
        }
    }
    /// `resources` by launch, and the launches being ended after their tasks finished.
    var launchResources = RunningResources(nil, tasks: [])

    public init(now: Date, stateDirectory: String, schedulerPID: Int32? = nil, heartbeat: DaemonHeartbeat? = nil,
                conditions: ConditionsRecord? = nil, pending: [PendingRow] = [], tasks: [LaunchedTask] = [],
                transfers: [TransferRecord] = [], transferBlockers: [TaskKey: [TransferBlocker]] = [:], events: [Event] = [],
                apps: [AppRow] = [], problem: String? = nil) {
        self.now = now
        self.stateDirectory = stateDirectory
        self.schedulerPID = schedulerPID
        self.heartbeat = heartbeat
        self.conditions = conditions
        pendingRows = pending
        self.tasks = tasks
        self.transfers = transfers
        self.transferBlockers = transferBlockers
        self.events = events
        self.apps = apps
        self.problem = problem
    }

    /// Whether something on screen counts down, so the dashboard must redraw every second.
    public var hasCountdown: Bool {
        !tasks.isEmpty || transfers.contains { $0.state == .running } || hosts.contains(where: \.isLost)
            || pending.contains { ($0.request.earliestBeginDate ?? .distantPast) > now && ($0.request.earliestBeginDate ?? now).timeIntervalSince(now) < 3600 }
            || apps.contains { ($0.record.throttledUntil ?? .distantPast) > now && ($0.record.throttledUntil ?? now).timeIntervalSince(now) < 3600 }
    }
}

/// The five panels, in focus order (keys 1–5).
public enum Panel: Int, CaseIterable, Sendable, Hashable {
    case pending, running, transfers, events, apps

    public var title: String {
        switch self {
        case .pending: return "Pending requests"
        case .running: return "Running handlers"
        case .transfers: return "Transfers"
        case .events: return "Events"
        case .apps: return "Apps"
        }
    }

    /// The theme key colouring the panel's border, after btop's boxes.
    public var boxThemeKey: String {
        switch self {
        case .pending: return "proc_box"
        case .running: return "mem_box"
        case .transfers: return "net_box"
        case .events: return "cpu_box"
        case .apps: return "mem_box"
        }
    }
}
