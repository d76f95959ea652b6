import FoundationEssentials
import SchedulerCore
import TaskState

/// The sending side of `bgctl watch --json`: remembers what it last sent and turns the state now
/// into the line that brings a reader up to date. Changes are not queued: when the reader is slow,
/// the watch simply asks later, and one line carries everything that changed meanwhile (memory
/// stays the size of the state, however long the reader stalls).
public struct FeedPublisher {
    /// What the watched machine looks like at one moment, beyond the mirror's records.
    public struct Surroundings: Equatable {
        public var stateDirectory: String
        public var configDirectory: String
        public var schedulerPID: Int32?
        public var directoryProblem: String?
        public var settings: SchedulerSettings
        public var catalog: ManifestCatalog

        public init(stateDirectory: String, configDirectory: String, schedulerPID: Int32?, directoryProblem: String?,
                    settings: SchedulerSettings, catalog: ManifestCatalog) {
            self.stateDirectory = stateDirectory
            self.configDirectory = configDirectory
            self.schedulerPID = schedulerPID
            self.directoryProblem = directoryProblem
            self.settings = settings
            self.catalog = catalog
        }
    }

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
    private var eventPosition: EventTail.Position?
    private var surroundings: Surroundings?

    public init() {}

    /// The first line, and the baseline for the changes after it.
    public mutating func snapshot(_ mirror: StateMirror, _ around: Surroundings) -> FeedSnapshot {
        let state = mirror.snapshot
        remember(state)
        eventPosition = mirror.eventPosition
        surroundings = around
        return FeedSnapshot(
            stateDirectory: around.stateDirectory, configDirectory: around.configDirectory, schedulerPID: around.schedulerPID,
            directoryProblem: around.directoryProblem, requests: state.requests, tasks: state.tasks,
            // No secret header leaves the machine, nor reaches a reader of `bgctl watch`.
            transfers: state.transfers.map(\.redacted),
            apps: state.apps, pushes: state.pushes, usage: state.usage, conditions: state.conditions, heartbeat: state.heartbeat,
            resources: state.resources, unreadable: unreadable, events: mirror.events, settings: around.settings,
            manifests: Self.manifests(around.catalog), manifestProblems: around.catalog.problems)
    }

    /// What changed since the last line; empty when nothing did.
    public mutating func change(_ mirror: StateMirror, _ around: Surroundings) -> FeedChange {
        let state = mirror.snapshot
        var change = FeedChange()
        var cleared: [String] = []
        change.requests = Self.diff(&requests, state.requests, key: \.key, wire: FeedKey.init)
        change.tasks = Self.diff(&tasks, state.tasks, key: \.key, wire: FeedKey.init)
        change.transfers = Self.diff(&transfers, state.transfers.map(\.redacted), key: \.key, wire: FeedKey.init)
        change.pushes = Self.diff(&pushes, state.pushes, key: \.key, wire: FeedKey.init)
        change.apps = Self.diff(&apps, state.apps, key: \.id, wire: { $0 })
        change.usage = Self.diff(&usage, state.usage, key: \.app, wire: { $0 })
        if state.conditions != conditions {
            conditions = state.conditions
            if let value = state.conditions { change.conditions = value } else { cleared.append("conditions") }
        }
        if state.heartbeat != heartbeat {
            heartbeat = state.heartbeat
            if let value = state.heartbeat { change.heartbeat = value } else { cleared.append("heartbeat") }
        }
        if state.resources != resources {
            resources = state.resources
            if let value = state.resources { change.resources = value } else { cleared.append("resources") }
        }
        let files = Self.sorted(state.unreadable)
        if files != unreadable {
            unreadable = files
            change.unreadable = files
        }
        let position = mirror.eventPosition
        if let sent = eventPosition, position != sent {
            let fresh = position.appended - sent.appended
            if position.reloads == sent.reloads, fresh >= 0, fresh <= mirror.events.count {
                if fresh > 0 { change.events = Array(mirror.events.suffix(fresh)) }
            } else {
                change.events = mirror.events
                change.eventsReplaced = true
            }
        }
        eventPosition = position
        if let before = surroundings {
            if around.schedulerPID != before.schedulerPID {
                if let pid = around.schedulerPID { change.schedulerPID = pid } else { cleared.append("schedulerPID") }
            }
            if around.directoryProblem != before.directoryProblem {
                if let problem = around.directoryProblem { change.directoryProblem = problem } else { cleared.append("directoryProblem") }
            }
            if around.settings != before.settings { change.settings = around.settings }
            if around.catalog != before.catalog {
                change.manifests = Self.manifests(around.catalog)
                change.manifestProblems = around.catalog.problems
            }
        }
        surroundings = around
        if !cleared.isEmpty { change.cleared = cleared }
        return change
    }

    private mutating func remember(_ state: StateSnapshot) {
        requests = Dictionary(state.requests.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        tasks = Dictionary(state.tasks.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        transfers = Dictionary(state.transfers.map { ($0.key, $0.redacted) }, uniquingKeysWith: { a, _ in a })
        pushes = Dictionary(state.pushes.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        apps = Dictionary(state.apps.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        usage = Dictionary(state.usage.map { ($0.app, $0) }, uniquingKeysWith: { a, _ in a })
        conditions = state.conditions
        heartbeat = state.heartbeat
        resources = state.resources
        unreadable = Self.sorted(state.unreadable)
    }

    /// Records set or removed since `sent`, which becomes `current`; nil when none.
    private static func diff<Record: Hashable & Codable & Sendable, Key: Hashable, Wire: Codable & Sendable>(
        _ sent: inout [Key: Record], _ current: [Record], key: (Record) -> Key, wire: (Key) -> Wire
    ) -> FeedChange.Records<Record, Wire>? {
        var set: [Record] = []
        var seen = Set<Key>()
        for record in current {
            let id = key(record)
            seen.insert(id)
            if sent[id] != record {
                set.append(record)
                sent[id] = record
            }
        }
        let removed = sent.keys.filter { !seen.contains($0) }
        for id in removed { sent[id] = nil }
        guard !set.isEmpty || !removed.isEmpty else { return nil }
        return FeedChange.Records(set: set, removed: removed.map(wire))
    }

    /// The manifests as they may leave the state directory: push subscription URLs without
    /// their credentials (``URLText``).
    private static func manifests(_ catalog: ManifestCatalog) -> [AppManifest] {
        catalog.manifests.values.sorted { $0.id < $1.id }.map { manifest in
            var shown = manifest
            for index in shown.push.indices { shown.push[index].ntfy = URLText.hidingCredentials(manifest.push[index].ntfy) }
            return shown
        }
    }

    private static func sorted(_ files: [StateSnapshot.UnreadableFile]) -> [FeedUnreadable] {
        files.map(FeedUnreadable.init).sorted { $0.path < $1.path }
    }
}
