import Foundation
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
    public private(set) var snapshot = StateSnapshot()
    private let eventTail: EventTail

    /// - Parameter history: the timeline's history to keep from the event log (see ``EventTail``).
    public init(paths: StatePaths, history: RunHistory? = nil) {
        self.paths = paths
        eventTail = EventTail(paths: paths, limit: Self.eventLimit, history: history)
        reloadAll()
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
        snapshot = loaded
        eventTail.update()
    }

    /// Reads each file the changes name, once.
    public func apply(_ changes: StateChangeSet) {
        if changes.everything {
            reloadAll()
            return
        }
        if changes.eventLog { eventTail.update() }
        var unreadable = Dictionary(snapshot.unreadable.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        if changes.heartbeat { snapshot.heartbeat = read(paths.heartbeat, as: DaemonHeartbeat.self, into: &unreadable) }
        if changes.conditions { snapshot.conditions = read(paths.conditions, as: ConditionsRecord.self, into: &unreadable) }
        if changes.resources { snapshot.resources = read(paths.resources, as: ResourceReport.self, into: &unreadable) }
        guard !changes.records.isEmpty || !changes.folders.isEmpty else {
            snapshot.unreadable = Array(unreadable.values)
            return
        }
        var changedRequests = false, changedTasks = false, changedTransfers = false, changedApps = false, changedPushes = false
        var changedUsage = false
        // A folder that appeared or went: what it holds now replaces what was known of its app.
        var records = changes.records
        for folder in changes.folders {
            switch folder {
            case .requests(let app):
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
        if changedRequests { snapshot.requests = Array(requests.values) }
        if changedTasks { snapshot.tasks = Array(tasks.values) }
        if changedTransfers { snapshot.transfers = Array(transfers.values) }
        if changedApps { snapshot.apps = Array(apps.values) }
        if changedPushes { snapshot.pushes = Array(pushes.values) }
        if changedUsage { snapshot.usage = Array(usage.values) }
        snapshot.unreadable = Array(unreadable.values)
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
