import Foundation
import TaskState

/// The dashboard's copy of the state directory, kept current file by file from inotify's
/// reports, so a change costs reading that file rather than the whole directory (10 000 pending
/// requests take over 100 ms to read in full).
final class StateMirror {
    let paths: StatePaths
    private(set) var requests: [TaskKey: PendingRequest] = [:]
    private(set) var tasks: [TaskKey: LaunchedTask] = [:]
    private(set) var transfers: [TaskKey: TransferRecord] = [:]
    private(set) var apps: [Identifier: AppRecord] = [:]
    private(set) var snapshot = StateSnapshot()
    /// The most recent events, oldest first, re-read only when the log changes.
    private(set) var events: [Event] = []

    init(paths: StatePaths) {
        self.paths = paths
        reloadAll()
    }

    /// Reads everything again.
    func reloadAll() {
        let loaded = StateSnapshot.load(paths)
        requests = Dictionary(loaded.requests.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        tasks = Dictionary(loaded.tasks.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        transfers = Dictionary(loaded.transfers.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        apps = Dictionary(loaded.apps.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        snapshot = loaded
        events = EventLog(paths: paths).recent(limit: SnapshotReader.eventLimit).events
    }

    /// Applies inotify's changes; anything it cannot place file by file reloads everything.
    func apply(_ changes: [ChangeWatcher.Change]) {
        var unreadable = Dictionary(snapshot.unreadable.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        for change in changes where !change.name.hasPrefix(".") {
            let path = "\(change.directory)/\(change.name)"
            if change.directory.isEmpty || change.mask & UInt32(IN_ISDIR) != 0 || change.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                reloadAll()
                return
            }
            unreadable[path] = nil
            let parent = StateFiles.directoryName(of: change.directory)
            switch (parent, change.directory) {
            case (paths.requests, _):
                update(&requests, path: path, as: PendingRequest.self, into: &unreadable)
            case (paths.tasks, _):
                update(&tasks, path: path, as: LaunchedTask.self, into: &unreadable)
            case (paths.transfers, _):
                if StatePaths.isPartialDataName(change.name) { continue }
                // A progress file stands for its record: read both and keep the newer.
                let recordPath = change.name.hasSuffix(".progress") ? String(path.dropLast(".progress".count)) + ".json" : path
                update(&transfers, path: recordPath, as: TransferRecord.self, into: &unreadable)
                if let key = transferKey(recordPath), let record = transfers[key] {
                    transfers[key] = TransferRecord.newest(record, progressFile: paths.transferProgress(key))
                }
            case (_, paths.apps):
                guard let id = identifier(change.name) else { continue }
                apps[id] = read(path, as: AppRecord.self, into: &unreadable)
            case (_, paths.root):
                if change.name.hasPrefix("events") { events = EventLog(paths: paths).recent(limit: SnapshotReader.eventLimit).events }
                if change.name == "daemon.json" { snapshot.heartbeat = read(path, as: DaemonHeartbeat.self, into: &unreadable) }
                if change.name == "conditions.json" { snapshot.conditions = read(path, as: ConditionsRecord.self, into: &unreadable) }
            default:
                continue
            }
        }
        snapshot.requests = Array(requests.values)
        snapshot.tasks = Array(tasks.values)
        snapshot.transfers = Array(transfers.values)
        snapshot.apps = Array(apps.values)
        snapshot.unreadable = Array(unreadable.values)
    }

    private func update<T: Decodable>(_ map: inout [TaskKey: T], path: String, as type: T.Type,
                                      into unreadable: inout [String: StateSnapshot.UnreadableFile]) {
        let appName = (path as NSString).deletingLastPathComponent.split(separator: "/").last.map(String.init) ?? ""
        let fileName = (path as NSString).lastPathComponent
        guard let app = try? Identifier(validating: appName), let id = identifier(fileName) else { return }
        map[TaskKey(app: app, identifier: id)] = read(path, as: type, into: &unreadable)
    }

    private func transferKey(_ path: String) -> TaskKey? {
        let appName = (path as NSString).deletingLastPathComponent.split(separator: "/").last.map(String.init) ?? ""
        guard let app = try? Identifier(validating: appName), let id = identifier((path as NSString).lastPathComponent) else { return nil }
        return TaskKey(app: app, identifier: id)
    }

    /// The identifier of `<identifier>.json`, or nil for other names.
    private func identifier(_ fileName: String) -> Identifier? {
        guard fileName.hasSuffix(".json") else { return nil }
        return try? Identifier(validating: String(fileName.dropLast(5)))
    }

    /// The decoded file; nil when it is gone, and nil plus an unreadable entry when it is bad.
    private func read<T: Decodable>(_ path: String, as type: T.Type,
                                    into unreadable: inout [String: StateSnapshot.UnreadableFile]) -> T? {
        guard StateFiles.exists(path) else { return nil }
        do {
            return try JSONFormat.decode(type, from: try StateFiles.read(path))
        } catch {
            unreadable[path] = StateSnapshot.UnreadableFile(path: path, reason: error.description)
            return nil
        }
    }
}
