import FoundationEssentials
import SchedulerCore
import TaskState

/// The reading side of `bgctl watch --json`: the watched state directory rebuilt from the
/// snapshot line and the change lines after it, in the shapes a local reader has (a
/// ``StateSnapshot``, the recent events, the settings and manifests), so `bgtop --host` draws it
/// with the same code as a local directory.
public struct FeedReplica {
    public private(set) var stateDirectory = ""
    public private(set) var configDirectory = ""
    public private(set) var schedulerPID: Int32?
    public private(set) var directoryProblem: String?
    public private(set) var settings = SchedulerSettings()
    public private(set) var catalog = ManifestCatalog()
    public private(set) var events: [Event] = []
    /// Every app's runs, from the events the feed sent since the snapshot (for the timeline).
    public private(set) var history = RunHistory()
    /// Whether the snapshot line has arrived: until then there is nothing to show.
    public private(set) var hasSnapshot = false
    private var requests: [TaskKey: PendingRequest] = [:]
    private var tasks: [TaskKey: LaunchedTask] = [:]
    private var transfers: [TaskKey: TransferRecord] = [:]
    private var pushes: [TaskKey: HeldPush] = [:]
    private var apps: [Identifier: AppRecord] = [:]
    private var usage: [Identifier: UsageHistory] = [:]
    private var conditions: ConditionsRecord?
    private var heartbeat: DaemonHeartbeat?
    private var resources: ResourceReport?
    private var unreadable: [FeedUnreadable] = []

    public init() {}

    /// A line of the feed that answers a request rather than describing state.
    public enum Answer: Sendable, Equatable {
        case result(FeedResult)
        case error(FeedError)
        /// A `log` line: the excerpt, with the request's `id` when it had one.
        case log(id: String?, LogExcerpt)
        case logChanged(Identifier)
    }

    /// A line the replica cannot use: the feed is broken and the connection should be dropped.
    public struct Broken: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// Applies one line. Returns a result or error line for the caller; throws for a line that
    /// breaks the feed (not JSON, an unknown version, a change before the snapshot).
    public mutating func apply(line: Data) throws(Broken) -> Answer? {
        struct Head: Decodable { var type: String; var version: Int? }
        let head: Head
        do {
            head = try JSONFormat.decode(Head.self, from: line)
        } catch {
            throw Broken(description: "not a feed line: \(error.description)")
        }
        do {
            switch head.type {
            case "snapshot":
                guard head.version == WatchFeed.version else {
                    throw Broken(description: "feed version \(head.version.map(String.init) ?? "none"), this bgtop reads \(WatchFeed.version)")
                }
                load(try JSONFormat.decode(FeedSnapshot.self, from: line))
            case "change":
                guard hasSnapshot else { throw Broken(description: "a change before the snapshot") }
                apply(try JSONFormat.decode(FeedChange.self, from: line))
            case "result":
                return .result(try JSONFormat.decode(FeedResult.self, from: line))
            case "error":
                return .error(try JSONFormat.decode(FeedError.self, from: line))
            case "log":
                let answer = try JSONFormat.decode(FeedLog.self, from: line)
                return .log(id: answer.id, answer.excerpt)
            case "logChanged":
                return .logChanged(try JSONFormat.decode(FeedLogChanged.self, from: line).app)
            default:
                // A newer watch may send kinds of lines this reader does not know yet.
                return nil
            }
        } catch let error as Broken {
            throw error
        } catch let error as StateError {
            throw Broken(description: "bad \(head.type) line: \(error.description)")
        } catch {
            throw Broken(description: "bad \(head.type) line")
        }
        return nil
    }

    /// The records as a local reader would have them.
    public var snapshot: StateSnapshot {
        var snapshot = StateSnapshot()
        snapshot.requests = Array(requests.values)
        snapshot.tasks = Array(tasks.values)
        snapshot.transfers = Array(transfers.values)
        snapshot.pushes = Array(pushes.values)
        snapshot.apps = Array(apps.values)
        snapshot.usage = Array(usage.values)
        snapshot.conditions = conditions
        snapshot.heartbeat = heartbeat
        snapshot.resources = resources
        snapshot.unreadable = unreadable.map(\.file)
        return snapshot
    }

    private mutating func load(_ line: FeedSnapshot) {
        stateDirectory = line.stateDirectory
        configDirectory = line.configDirectory
        schedulerPID = line.schedulerPID
        directoryProblem = line.directoryProblem
        requests = Dictionary(line.requests.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        tasks = Dictionary(line.tasks.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        transfers = Dictionary(line.transfers.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        pushes = Dictionary(line.pushes.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        apps = Dictionary(line.apps.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        usage = Dictionary(line.usage.map { ($0.app, $0) }, uniquingKeysWith: { a, _ in a })
        conditions = line.conditions
        heartbeat = line.heartbeat
        resources = line.resources
        unreadable = line.unreadable
        events = Array(line.events.suffix(StateMirror.eventLimit))
        settings = line.settings
        let throttles = line.settings
        history = RunHistory(throttleDelay: { throttles.throttleDelay(level: $0) })
        for event in line.events { history.apply(event) }
        catalog = Self.catalog(line.manifests, line.manifestProblems)
        hasSnapshot = true
    }

    private mutating func apply(_ change: FeedChange) {
        for name in change.cleared ?? [] {
            switch name {
            case "schedulerPID": schedulerPID = nil
            case "directoryProblem": directoryProblem = nil
            case "conditions": conditions = nil
            case "heartbeat": heartbeat = nil
            case "resources": resources = nil
            default: continue
            }
        }
        if let pid = change.schedulerPID { schedulerPID = pid }
        if let problem = change.directoryProblem { directoryProblem = problem }
        if let value = change.conditions { conditions = value }
        if let value = change.heartbeat { heartbeat = value }
        if let value = change.resources { resources = value }
        Self.merge(&requests, change.requests, key: \.key, local: \.taskKey)
        Self.merge(&tasks, change.tasks, key: \.key, local: \.taskKey)
        Self.merge(&transfers, change.transfers, key: \.key, local: \.taskKey)
        Self.merge(&pushes, change.pushes, key: \.key, local: \.taskKey)
        Self.merge(&apps, change.apps, key: \.id, local: { $0 })
        Self.merge(&usage, change.usage, key: \.app, local: { $0 })
        if let files = change.unreadable { unreadable = files }
        if let fresh = change.events {
            if change.eventsReplaced == true { history = history.emptied() }
            for event in fresh { history.apply(event) }
            events = change.eventsReplaced == true ? fresh : events + fresh
            if events.count > StateMirror.eventLimit { events.removeFirst(events.count - StateMirror.eventLimit) }
        }
        if let value = change.settings { settings = value }
        if change.manifests != nil || change.manifestProblems != nil {
            catalog = Self.catalog(change.manifests ?? Array(catalog.manifests.values), change.manifestProblems ?? catalog.problems)
        }
    }

    private static func merge<Record: Codable & Sendable, Key: Hashable, Wire: Codable & Sendable>(
        _ records: inout [Key: Record], _ change: FeedChange.Records<Record, Wire>?, key: (Record) -> Key, local: (Wire) -> Key
    ) {
        guard let change else { return }
        for wire in change.removed { records[local(wire)] = nil }
        for record in change.set { records[key(record)] = record }
    }

    private static func catalog(_ manifests: [AppManifest], _ problems: [ManifestProblem]) -> ManifestCatalog {
        ManifestCatalog(manifests: Dictionary(manifests.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }), problems: problems)
    }
}
