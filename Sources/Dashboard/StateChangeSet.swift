import Foundation
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
    }

    public private(set) var records: Set<Record> = []
    /// `events.jsonl` (or a rotated file) changed: read the log's new lines.
    public private(set) var eventLog = false
    public private(set) var heartbeat = false
    public private(set) var conditions = false
    /// The config's `apps/` folder changed: the manifests the policy uses must be read again.
    public private(set) var configuration = false
    /// Something that cannot be placed file by file (a folder appeared or went, inotify's queue
    /// overflowed): the whole state directory must be read again.
    public private(set) var everything = false

    public init() {}

    public var isEmpty: Bool {
        records.isEmpty && !eventLog && !heartbeat && !conditions && !configuration && !everything
    }

    /// Adds one report. `configApps` is the config's `apps/` folder.
    public mutating func add(_ change: ChangeWatcher.Change, paths: StatePaths, configApps: String) {
        add(directory: change.directory, name: change.name, mask: change.mask, paths: paths, configApps: configApps)
    }

    /// Adds one report: `name` changed in the watched `directory` (empty: inotify's queue
    /// overflowed), with inotify's `mask`.
    public mutating func add(directory: String, name: String, mask: UInt32, paths: StatePaths, configApps: String) {
        let change = (directory: directory, name: name, mask: mask)
        if change.directory == configApps {
            configuration = true
            return
        }
        if change.name.hasPrefix(".") { return }
        if change.directory.isEmpty || change.mask & UInt32(IN_ISDIR) != 0 || change.mask & UInt32(IN_Q_OVERFLOW) != 0
            || change.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
            everything = true
            return
        }
        if change.directory == paths.root {
            if change.name.hasPrefix("events") && change.name.hasSuffix(".jsonl") { eventLog = true }
            if change.name == "daemon.json" { heartbeat = true }
            if change.name == "conditions.json" { conditions = true }
            return
        }
        if change.directory == paths.apps {
            if let id = Self.identifier(ofRecord: change.name) { records.insert(.app(id)) }
            return
        }
        let parent = StateFiles.directoryName(of: change.directory)
        guard [paths.requests, paths.tasks, paths.transfers].contains(parent),
              let app = try? Identifier(validating: String(change.directory.dropFirst(parent.count + 1))) else { return }
        if parent == paths.transfers {
            if StatePaths.isPartialDataName(change.name) { return }
            let name = change.name.hasSuffix(".progress") ? String(change.name.dropLast(".progress".count)) + ".json" : change.name
            if let id = Self.identifier(ofRecord: name) { records.insert(.transfer(TaskKey(app: app, identifier: id))) }
            return
        }
        guard let id = Self.identifier(ofRecord: change.name) else { return }
        let key = TaskKey(app: app, identifier: id)
        records.insert(parent == paths.requests ? .request(key) : .task(key))
    }

    /// Adds every report.
    public mutating func add(_ changes: [ChangeWatcher.Change], paths: StatePaths, configApps: String) {
        for change in changes { add(change, paths: paths, configApps: configApps) }
    }

    /// The identifier of `<identifier>.json`; nil for other names (temporary files and the like).
    static func identifier(ofRecord fileName: String) -> Identifier? {
        guard fileName.hasSuffix(".json") else { return nil }
        return try? Identifier(validating: String(fileName.dropLast(5)))
    }
}
