import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// What inotify's reports ask the dashboard to read again, gathered until the next reload: each
/// changed record once however often it changed, so a burst of commits costs one read per file
/// that changed rather than one per report, and never a read of the whole state directory.
public struct StateChangeSet: Sendable, Hashable {
    /// One record file, named by what it holds.
    public enum Record: Sendable, Hashable {
        case request(TaskKey)
        case task(TaskKey)
        /// A transfer's record or its progress file: the two are read together.
        case transfer(TaskKey)
        case app(Identifier)
        /// A held push.
        case push(TaskKey)
        /// An app's usage history.
        case usage(Identifier)
    }

    /// A per-app folder of `requests/`, `tasks/`, `transfers/` or `pushes/` that appeared or went: every
    /// record in it is read (or dropped), since files may have been made before it was watched.
    public enum Folder: Sendable, Hashable {
        case requests(Identifier)
        case tasks(Identifier)
        case transfers(Identifier)
        case pushes(Identifier)
    }

    public private(set) var records: Set<Record> = []
    public private(set) var folders: Set<Folder> = []
    /// `events.jsonl` (or a rotated file) changed: read the log's new lines.
    public private(set) var eventLog = false
    public private(set) var heartbeat = false
    public private(set) var conditions = false
    /// `resources.json`, the resource monitor's sample (rewritten up to once a second while
    /// something runs).
    public private(set) var resources = false
    /// The config's `apps/` folder changed: the manifests the policy uses must be read again.
    public private(set) var configuration = false
    /// Something that cannot be placed file by file (a folder appeared or went, inotify's queue
    /// overflowed): the whole state directory must be read again.
    public private(set) var everything = false

    public init() {}

    public var isEmpty: Bool {
        records.isEmpty && folders.isEmpty && !eventLog && !heartbeat && !conditions && !resources && !configuration && !everything
    }

    /// Adds one report. `configApps` is the config's `apps/` folder.
    public mutating func add(_ change: ChangeWatcher.Change, paths: StatePaths, configApps: String) {
        add(directory: change.directory, name: change.name, mask: change.mask, paths: paths, configApps: configApps)
    }

    /// Adds one report: `name` changed in the watched `directory` (empty: inotify's queue
    /// overflowed), with inotify's `mask`.
    public mutating func add(directory: String, name: String, mask: UInt32, paths: StatePaths, configApps: String) {
        if directory == configApps {
            configuration = true
            return
        }
        if name.hasPrefix(".") { return }
        let kinds = [paths.requests, paths.tasks, paths.transfers, paths.pushes]
        if mask & UInt32(IN_ISDIR) != 0, kinds.contains(directory) {
            // An app's folder: read just that folder. A name that is no app identifier is
            // reported by reading everything, as at start.
            guard let app = try? Identifier(validating: name) else {
                everything = true
                return
            }
            folders.insert(Self.folder(in: directory, app: app, paths: paths))
            return
        }
        let parent = StateFiles.directoryName(of: directory)
        let app = kinds.contains(parent) ? try? Identifier(validating: String(directory.dropFirst(parent.count + 1))) : nil
        if mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0, let app {
            folders.insert(Self.folder(in: parent, app: app, paths: paths))
            return
        }
        if directory.isEmpty || mask & UInt32(IN_ISDIR) != 0 || mask & UInt32(IN_Q_OVERFLOW) != 0
            || mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            everything = true
            return
        }
        if directory == paths.root {
            if name.hasPrefix("events") && name.hasSuffix(".jsonl") { eventLog = true }
            if name == "daemon.json" { heartbeat = true }
            if name == "conditions.json" { conditions = true }
            if name == "resources.json" { resources = true }
            return
        }
        if directory == paths.apps {
            if let id = Self.identifier(ofRecord: name) { records.insert(.app(id)) }
            return
        }
        if directory == paths.usage {
            if let id = Self.identifier(ofRecord: name) { records.insert(.usage(id)) }
            return
        }
        guard let app else { return }
        if parent == paths.transfers {
            if StatePaths.isPartialDataName(name) { return }
            let name = name.hasSuffix(".progress") ? String(name.dropLast(".progress".count)) + ".json" : name
            if let id = Self.identifier(ofRecord: name) { records.insert(.transfer(TaskKey(app: app, identifier: id))) }
            return
        }
        guard let id = Self.identifier(ofRecord: name) else { return }
        let key = TaskKey(app: app, identifier: id)
        records.insert(parent == paths.requests ? .request(key) : parent == paths.pushes ? .push(key) : .task(key))
    }

    /// Adds every report.
    public mutating func add(_ changes: [ChangeWatcher.Change], paths: StatePaths, configApps: String) {
        for change in changes { add(change, paths: paths, configApps: configApps) }
    }

    private static func folder(in parent: String, app: Identifier, paths: StatePaths) -> Folder {
        switch parent {
        case paths.requests: return .requests(app)
        case paths.tasks: return .tasks(app)
        case paths.pushes: return .pushes(app)
        default: return .transfers(app)
        }
    }

    /// The identifier of `<identifier>.json`; nil for other names (temporary files and the like).
    static func identifier(ofRecord fileName: String) -> Identifier? {
        guard fileName.hasSuffix(".json") else { return nil }
        return try? Identifier(validating: String(fileName.dropLast(5)))
    }
}
