import FoundationEssentials
import TaskState

/// The dashboard's copy of the state directory, kept current file by file from inotify's
/// reports, so a change costs reading that file rather than the whole directory (10 000 pending
/// requests take over 100 ms to read in full), and new events cost reading what was appended.
/// `bgtop` keeps one; so does `bgctl watch`, which sends what changed in it to a `bgtop --host`.
public final class StateMirror {
    /// How many of the newest events are kept: as many as the dashboard shows.
    public static let eventLimit = 500

    public let paths: StatePaths
    private var requests: [TaskKey: PendingRequest] = [:]
    private var tasks: [TaskKey: LaunchedTask] = [:]
    private var transfers: [TaskKey: TransferRecord] = [:]
    private var apps: [Identifier: AppRecord] = [:]
    private var pushes: [TaskKey: HeldPush] = [:]
    private var usage: [Identifier: UsageHistory] = [:]
    /// Every record as last read; its `requests` are gathered from `requests` only when asked
    /// (``snapshot``), since with 100 000 of them that costs more than the change that was read.
    private var gathered = StateSnapshot()
    private var requestsGathered = true
    /// The requests read since ``takeRequestChanges()``; nil once every file was read again.
    private var requestChanges: Set<TaskKey>? = []
    private let tracksRequestChanges: Bool
    private let eventTail: EventTail

    /// - Parameters:
    ///   - history: the timeline's history to keep from the event log (see ``EventTail``).
    ///   - tracksRequestChanges: keep the keys of the requests read (``takeRequestChanges()``),
    ///     for a reader that follows requests one by one (``PendingWaits``).
    public init(paths: StatePaths, history: RunHistory? = nil, tracksRequestChanges: Bool = false) {
        self.paths = paths
        self.tracksRequestChanges = tracksRequestChanges
        eventTail = EventTail(paths: paths, limit: Self.eventLimit, history: history)
        reloadAll()
    }

    /// Every record as last read.
    public var snapshot: StateSnapshot {
        if !requestsGathered {
            gathered.requests = Array(requests.values)
            requestsGathered = true
        }
        return gathered
    }

    /// Every record as last read but the pending requests (``request(_:)`` looks them up one by one).
    public var snapshotExceptRequests: StateSnapshot {
        var snapshot = gathered
        snapshot.requests = []
        return snapshot
    }

    /// The pending request `key` as last read.
    public func request(_ key: TaskKey) -> PendingRequest? { requests[key] }

    /// Every pending request's key.
    public var requestKeys: Dictionary<TaskKey, PendingRequest>.Keys { requests.keys }

    /// The keys of the requests read (changed, added or gone) since the last call, or nil when
    /// every file was read again since (or changes are not tracked): then any request may have changed.
    public func takeRequestChanges() -> Set<TaskKey>? {
        guard tracksRequestChanges else { return nil }
        defer { requestChanges = [] }
        return requestChanges
    }

    /// The most recent events, oldest first.
    public var events: [Event] { eventTail.events }

    /// The event log's tail, for readers that send only what was appended (``EventTail/position``).
    public var eventPosition: EventTail.Position { eventTail.position }

    /// Every app's runs over the last hours, when the mirror keeps them.
    public var history: RunHistory? { eventTail.history }

    /// Reads every state file again. The event log is not read again: its tail follows the file
    /// itself, whatever inotify missed.
    public func reloadAll() {
        let loaded = StateSnapshot.load(paths)
        requests = Dictionary(loaded.requests.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        tasks = Dictionary(loaded.tasks.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        transfers = Dictionary(loaded.transfers.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        apps = Dictionary(loaded.apps.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        pushes = Dictionary(loaded.pushes.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        usage = Dictionary(loaded.usage.map { ($0.app, $0) }, uniquingKeysWith: { a, _ in a })
        gathered = loaded
        requestsGathered = true
        requestChanges = nil
        eventTail.update()
    }

    /// Reads each file the changes name, once.
    public func apply(_ changes: StateChangeSet) {
        if changes.everything {
            reloadAll()
            return
        }
        if changes.eventLog { eventTail.update() }
        var unreadable = Dictionary(gathered.unreadable.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        if changes.heartbeat { gathered.heartbeat = read(paths.heartbeat, as: DaemonHeartbeat.self, into: &unreadable) }
        if changes.conditions { gathered.conditions = read(paths.conditions, as: ConditionsRecord.self, into: &unreadable) }
        if changes.resources { gathered.resources = read(paths.resources, as: ResourceReport.self, into: &unreadable) }
        guard !changes.records.isEmpty || !changes.folders.isEmpty else {
            gathered.unreadable = Array(unreadable.values)
            return
        }
        var changedRequests = false, changedTasks = false, changedTransfers = false, changedApps = false, changedPushes = false
        var changedUsage = false
        // A folder that appeared or went: what it holds now replaces what was known of its app.
        var records = changes.records
        for folder in changes.folders {
            switch folder {
            case .requests(let app):
                for key in requests.keys where key.app == app { requestChanges?.insert(key) }
                requests = requests.filter { $0.key.app != app }
                for id in recordNames(in: "\(paths.requests)/\(app)", into: &unreadable) {
                    records.insert(.request(TaskKey(app: app, identifier: id)))
                }
                changedRequests = true
            case .tasks(let app):
                tasks = tasks.filter { $0.key.app != app }
                for id in recordNames(in: "\(paths.tasks)/\(app)", into: &unreadable) {
                    records.insert(.task(TaskKey(app: app, identifier: id)))
                }
                changedTasks = true
            case .transfers(let app):
                transfers = transfers.filter { $0.key.app != app }
                for id in recordNames(in: "\(paths.transfers)/\(app)", into: &unreadable) {
                    records.insert(.transfer(TaskKey(app: app, identifier: id)))
                }
                changedTransfers = true
            case .pushes(let app):
                pushes = pushes.filter { $0.key.app != app }
                for id in recordNames(in: "\(paths.pushes)/\(app)", into: &unreadable) {
                    records.insert(.push(TaskKey(app: app, identifier: id)))
                }
                changedPushes = true
            }
        }
        for record in records {
            switch record {
            case .request(let key):
                requests[key] = read(paths.request(key), as: PendingRequest.self, names: key.description, into: &unreadable) { $0.key.description }
                requestChanges?.insert(key)
                changedRequests = true
            case .task(let key):
                tasks[key] = read(paths.task(key), as: LaunchedTask.self, names: key.description, into: &unreadable) { $0.key.description }
                changedTasks = true
            case .transfer(let key):
                // A progress file stands for its record: read both and keep the newer.
                transfers[key] = read(paths.transfer(key), as: TransferRecord.self, names: key.description, into: &unreadable) { $0.key.description }
                    .map { TransferRecord.newest($0, progressFile: paths.transferProgress(key)) }
                changedTransfers = true
            case .app(let id):
                apps[id] = read(paths.app(id), as: AppRecord.self, names: id.rawValue, into: &unreadable) { $0.id.rawValue }
                changedApps = true
            case .push(let key):
                pushes[key] = read(paths.push(key), as: HeldPush.self, names: key.description, into: &unreadable) { $0.key.description }
                changedPushes = true
            case .usage(let id):
                usage[id] = read(paths.usage(of: id), as: UsageHistory.self, names: id.rawValue, into: &unreadable) { $0.app.rawValue }
                changedUsage = true
            }
        }
        // Only the kinds that changed are gathered again.
        if changedRequests { requestsGathered = false }
        if changedTasks { gathered.tasks = Array(tasks.values) }
        if changedTransfers { gathered.transfers = Array(transfers.values) }
        if changedApps { gathered.apps = Array(apps.values) }
        if changedPushes { gathered.pushes = Array(pushes.values) }
        if changedUsage { gathered.usage = Array(usage.values) }
        gathered.unreadable = Array(unreadable.values)
    }

    /// The identifiers of the `<identifier>.json` records in a per-app folder (none when it is gone).
    private func recordNames(in folder: String, into unreadable: inout [String: StateSnapshot.UnreadableFile]) -> [Identifier] {
        unreadable[folder] = nil
        guard StateFiles.exists(folder) else { return [] }
        do {
            return try StateFiles.names(in: folder).compactMap { name in
                guard name.hasSuffix(".json") else { return nil }
                return try? Identifier(validating: String(name.dropLast(5)))
            }
        } catch {
            unreadable[folder] = StateSnapshot.UnreadableFile(path: folder, reason: error.description)
            return []
        }
    }

    /// The decoded file; nil when it is gone, and nil plus an unreadable entry when it is bad or
    /// names another record than its place says.
    private func read<T: Decodable>(_ path: String, as type: T.Type, names expected: String? = nil,
                                    into unreadable: inout [String: StateSnapshot.UnreadableFile],
                                    named: (T) -> String = { _ in "" }) -> T? {
        unreadable[path] = nil
        guard StateFiles.exists(path) else { return nil }
        do {
            let value = try JSONFormat.decode(type, from: try StateFiles.read(path))
            if let expected, named(value) != expected {
                unreadable[path] = StateSnapshot.UnreadableFile(path: path, reason: "contents name \(named(value)), which belongs elsewhere")
                return nil
            }
            return value
        } catch {
            unreadable[path] = StateSnapshot.UnreadableFile(path: path, reason: error.description)
            return nil
        }
    }
}
