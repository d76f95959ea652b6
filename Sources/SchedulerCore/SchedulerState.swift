import FoundationEssentials
import TaskState

/// Everything the policy decides from, in memory. The daemon keeps one; `bgtop --demo` and the
/// tests keep theirs. All mutation goes through methods that note what changed, so the daemon
/// writes only those files.
public struct SchedulerState: Sendable {
    public internal(set) var settings: SchedulerSettings
    public internal(set) var catalog: ManifestCatalog
    /// Changed only through ``setApp(_:)``, which keeps ``appsOwingReports`` and ``appsAttached``.
    public private(set) var apps: [Identifier: AppRecord] = [:]
    /// Apps with a VoIP report owed, and apps with a process attached: asked about at every turn,
    /// when most of thousands of apps have neither.
    private(set) var appsOwingReports: Set<Identifier> = []
    private(set) var appsAttached: Set<Identifier> = []
    /// Changed only through ``setRequest(_:)`` and ``removeRequest(_:)``, which keep the indexes.
    public private(set) var requests: [TaskKey: PendingRequest] = [:]
    /// The pending requests by the conditions they need and their dates (see ``RequestSchedule``).
    private(set) var schedule = RequestSchedule()
    /// The pending identifiers of each app, so per-app questions (limits, cancel all) do not scan
    /// every request of every app.
    private var pendingByApp: [Identifier: Set<Identifier>] = [:]
    public internal(set) var tasks: [TaskKey: LaunchedTask] = [:]
    /// Changed only through ``setTransfer(_:durable:)`` and ``removeTransfer(_:)``, which keep the index.
    public private(set) var transfers: [TaskKey: TransferRecord] = [:]
    /// The transfers by what a turn asks of them (see ``TransferSchedule``).
    private(set) var transferSchedule = TransferSchedule()
    /// Background pushes held until they can be delivered (`pushes/<app>/<id>.json`).
    public internal(set) var pushes: [TaskKey: HeldPush] = [:]
    /// When a person used each app (`usage/<app>.json`), and the model learned from it, rebuilt
    /// whenever uses are added.
    public internal(set) var usage: [Identifier: UsageHistory] = [:]
    public internal(set) var usageModels: [Identifier: UsageModel] = [:]
    /// The time zone hours of the week are counted in (the machine's; tests pin one).
    public var timeZone: WallClockZone = .system {
        didSet {
            for history in usage.values { setUsage(history, now: usageModels[history.app]?.builtAt ?? conditions.probedAt, recordChange: false) }
        }
    }
    public internal(set) var conditions: ConditionsRecord
    /// The processes the scheduler started (or decided to kill) and has not seen end, by pid:
    /// `processes.json`, so that after a crash none of them runs on unsupervised.
    public internal(set) var processes: [Int32: ProcessLedger.Entry] = [:]
    /// What the resource monitor measured, the CPU windows, and leftover endings.
    public internal(set) var accounting = ResourceAccounting()
    /// Running transfers paused by a command whose attempt has not ended yet, with the command:
    /// their `transferPaused` event waits for the bytes the attempt left on disk.
    var pausesAwaitingEnd: [TaskKey: String?] = [:]

    /// The clocks at the last turn (``noteClocks(_:)``); not kept on disk: a new scheduler cannot
    /// know what happened while none ran.
    var lastClockReading: ClockReading?

    /// What changed since the last ``takeChanges()``.
    public internal(set) var changes = ChangeSet()

    public init(settings: SchedulerSettings = SchedulerSettings(), catalog: ManifestCatalog = ManifestCatalog(),
                conditions: ConditionsRecord) {
        self.settings = settings
        self.catalog = catalog
        self.conditions = conditions
    }

    /// Builds the state from what is on disk (the daemon's start-up), usage models as of the
    /// conditions' probe.
    public init(settings: SchedulerSettings, catalog: ManifestCatalog, snapshot: StateSnapshot, conditions: ConditionsRecord) {
        self.init(settings: settings, catalog: catalog, snapshot: snapshot, conditions: conditions, usageAsOf: conditions.probedAt)
    }

    private init(settings: SchedulerSettings, catalog: ManifestCatalog, snapshot: StateSnapshot, conditions: ConditionsRecord,
                 usageAsOf: Date) {
        self.init(settings: settings, catalog: catalog, conditions: conditions)
        for app in snapshot.apps { insertApp(app) }
        for request in snapshot.requests { insertRequest(request) }
        for task in snapshot.tasks { tasks[task.key] = task }
        for transfer in snapshot.transfers { insertTransfer(transfer) }
        for push in snapshot.pushes { pushes[push.key] = push }
        for history in snapshot.usage { setUsage(history, now: usageAsOf, recordChange: false) }
        for entry in snapshot.processes?.processes ?? [] { processes[entry.pid] = entry }
        loadEndings(snapshot.processes?.endings)
        if let stored = snapshot.conditions {
            self.conditions.overrides = stored.overrides
            self.conditions.effective = stored.overrides.applied(to: self.conditions.probed)
        }
        // The fresh probe is always written, so readers see what this scheduler measured.
        changes.conditions = true
    }

    /// The state as a reader of the state directory sees it (`bgctl`, `bgtop`): the conditions as
    /// the scheduler last recorded them (neutral when it never did), so the policy's questions
    /// (blockers, refusals) are answered as the scheduler would.
    public init(reading snapshot: StateSnapshot, settings: SchedulerSettings, catalog: ManifestCatalog, now: Date) {
        // Models as of now, as the scheduler (which rebuilds them hourly) judges.
        self.init(settings: settings, catalog: catalog, snapshot: snapshot,
                  conditions: snapshot.conditions ?? ConditionsRecord(probed: Conditions(), probedAt: now), usageAsOf: now)
    }

    /// Hands over the accumulated changes and starts a fresh set.
    public mutating func takeChanges() -> ChangeSet {
        defer { changes = ChangeSet() }
        return changes
    }

    // MARK: - Recorded mutation

    mutating func setRequest(_ request: PendingRequest) {
        insertRequest(request)
        changes.requests.insert(request.key)
    }

    mutating func removeRequest(_ key: TaskKey) {
        guard let request = requests.removeValue(forKey: key) else { return }
        schedule.remove(request)
        pendingByApp[key.app]?.remove(key.identifier)
        if pendingByApp[key.app]?.isEmpty == true { pendingByApp[key.app] = nil }
        changes.requests.insert(key)
    }

    /// Adds or replaces a request, with its place in the indexes.
    private mutating func insertRequest(_ request: PendingRequest) {
        if let old = requests.updateValue(request, forKey: request.key) { schedule.remove(old) }
        schedule.insert(request)
        pendingByApp[request.app, default: []].insert(request.identifier)
    }

    mutating func setTask(_ task: LaunchedTask) {
        tasks[task.key] = task
        changes.tasks.insert(task.key)
    }

    mutating func removeTask(_ key: TaskKey) {
        guard tasks.removeValue(forKey: key) != nil else { return }
        changes.tasks.insert(key)
    }

    mutating func setTransfer(_ transfer: TransferRecord, durable: Bool = true) {
        insertTransfer(transfer)
        if durable {
            changes.transfers.insert(transfer.key)
        } else if !changes.transfers.contains(transfer.key) {
            changes.transferProgress.insert(transfer.key)
        }
    }

    private mutating func insertTransfer(_ transfer: TransferRecord) {
        if let old = transfers.updateValue(transfer, forKey: transfer.key) { transferSchedule.remove(old) }
        transferSchedule.insert(transfer)
    }

    mutating func removeTransfer(_ key: TaskKey) {
        guard let old = transfers.removeValue(forKey: key) else { return }
        transferSchedule.remove(old)
        changes.transfers.insert(key)
    }

    mutating func setPush(_ push: HeldPush) {
        pushes[push.key] = push
        changes.pushes.insert(push.key)
    }

    mutating func removePush(_ key: TaskKey) {
        guard pushes.removeValue(forKey: key) != nil else { return }
        changes.pushes.insert(key)
    }

    /// Keeps the app's history and rebuilds its model as of `now`.
    mutating func setUsage(_ history: UsageHistory, now: Date, recordChange: Bool = true) {
        usage[history.app] = history
        usageModels[history.app] = UsageModel(history: history, now: now, halfLifeDays: settings.usageHalfLifeDays, zone: timeZone)
        if recordChange { changes.usage.insert(history.app) }
    }

    mutating func setProcess(_ entry: ProcessLedger.Entry) {
        guard processes[entry.pid] != entry else { return }
        processes[entry.pid] = entry
        changes.processes = true
    }

    mutating func removeProcess(_ pid: Int32) {
        guard processes.removeValue(forKey: pid) != nil else { return }
        changes.processes = true
    }

    mutating func setApp(_ app: AppRecord) {
        guard apps[app.id] != app else { return }
        insertApp(app)
        changes.apps.insert(app.id)
    }

    private mutating func insertApp(_ app: AppRecord) {
        apps[app.id] = app
        if app.voip?.debts.isEmpty == false { appsOwingReports.insert(app.id) } else { appsOwingReports.remove(app.id) }
        if app.attachedProcess != nil { appsAttached.insert(app.id) } else { appsAttached.remove(app.id) }
    }

    mutating func setConditions(_ record: ConditionsRecord) {
        guard record != conditions else { return }
        conditions = record
        changes.conditions = true
    }

    /// Adds an event to the next commit.
    public mutating func record(_ event: Event) {
        changes.events.append(event)
    }

    /// The app's record, or a fresh one for an app seen for the first time.
    func app(_ id: Identifier) -> AppRecord { apps[id] ?? AppRecord(id: id) }

    /// Whether the app is enabled, read in place: asked for every request and transfer in a turn,
    /// where copying the whole record (or making a fresh one) would cost more than the question.
    func isEnabled(_ id: Identifier) -> Bool {
        guard let index = apps.index(forKey: id) else { return true }
        return apps.values[index].enabled
    }

    /// Until when the app is throttled, if it is, read in place (see ``isEnabled(_:)``).
    func throttledUntil(_ id: Identifier) -> Date? {
        guard let index = apps.index(forKey: id) else { return nil }
        return apps.values[index].throttledUntil
    }

    /// Pending requests of one app.
    func requests(of app: Identifier) -> [PendingRequest] {
        (pendingByApp[app] ?? []).compactMap { requests[TaskKey(app: app, identifier: $0)] }
    }
}

/// The entities touched since the last commit. A key whose entity no longer exists means the file
/// is to be removed.
public struct ChangeSet: Sendable, Equatable {
    public var requests: Set<TaskKey> = []
    public var tasks: Set<TaskKey> = []
    public var transfers: Set<TaskKey> = []
    /// Transfers whose only change is progress: written without a sync, since a lost progress
    /// figure costs nothing (the partial file's size is the truth on resume).
    public var transferProgress: Set<TaskKey> = []
    public var pushes: Set<TaskKey> = []
    public var usage: Set<Identifier> = []
    public var apps: Set<Identifier> = []
    public var conditions = false
    /// The process ledger changed.
    public var processes = false
    public var events: [Event] = []

    public init() {}

    public var isEmpty: Bool {
        requests.isEmpty && tasks.isEmpty && transfers.isEmpty && transferProgress.isEmpty && pushes.isEmpty && usage.isEmpty && apps.isEmpty
            && !conditions && !processes && events.isEmpty
    }

    /// Whether anything but progress changed, which needs the durable group commit.
    public var needsDurableCommit: Bool {
        !(requests.isEmpty && tasks.isEmpty && transfers.isEmpty && pushes.isEmpty && usage.isEmpty && apps.isEmpty && !conditions && !processes && events.isEmpty)
    }
}
