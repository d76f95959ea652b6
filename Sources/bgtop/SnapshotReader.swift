import Dashboard
import DashboardFeed
import FoundationEssentials
import SchedulerCore
import StateFeed
import TaskState

/// Turns state into a dashboard snapshot, with each request's blockers worked out by the
/// scheduler's own policy. Read-only: the dashboard never writes state, only commands. A state
/// directory watched over ssh (``RemoteHost``) goes through the same ``build(_:events:settings:catalog:stateDirectory:schedulerPID:directoryProblem:now:)``,
/// with the settings and manifests the watch sends.
///
/// The settings and manifests the policy needs are read once and again only when the config's
/// `apps/` folder changes (``reloadConfiguration()``), not for every snapshot.
struct SnapshotReader {
    static let eventLimit = StateMirror.eventLimit

    let paths: StatePaths
    let configDirectory: String
    private var settings: SchedulerSettings
    private var catalog: ManifestCatalog

    init(paths: StatePaths, configDirectory: String) {
        self.paths = paths
        self.configDirectory = configDirectory
        settings = SchedulerSettings()
        catalog = ManifestCatalog()
        reloadConfiguration()
    }

    var appsDirectory: String { "\(configDirectory)/apps" }

    mutating func reloadConfiguration() {
        settings = (try? SchedulerSettings.load(configDirectory: configDirectory)) ?? SchedulerSettings()
        catalog = ManifestCatalog.load(from: appsDirectory)
    }

    /// The delay of a throttle of each level under the current settings: how the timeline knows
    /// when a throttle logged in the event log was released.
    var throttleDelay: @Sendable (Int) -> TimeInterval {
        let settings = settings
        return { settings.throttleDelay(level: $0) }
    }

    /// Reads the whole state directory (for `--batch`).
    func read(now: Date = Date()) -> DashboardSnapshot {
        build(from: StateSnapshot.load(paths), events: EventLog(paths: paths).recent(limit: Self.eventLimit).events, now: now)
    }

    /// The dashboard snapshot for state already in memory (see ``StateMirror``).
    func build(from snapshot: StateSnapshot, events: [Event], history: RunHistory? = nil, now: Date = Date()) -> DashboardSnapshot {
        Self.build(snapshot, events: events, history: history, settings: settings, catalog: catalog, stateDirectory: paths.root,
                   schedulerPID: StateLock.holder(paths), directoryProblem: DirectoryProblem.describe(paths.root), now: now)
    }

    /// The dashboard snapshot for `snapshot` of the state directory `stateDirectory`, wherever it is.
    static func build(_ snapshot: StateSnapshot, events: [Event], history: RunHistory? = nil, settings: SchedulerSettings,
                      catalog: ManifestCatalog, stateDirectory: String, schedulerPID: Int32?, directoryProblem: String?,
                      now: Date) -> DashboardSnapshot {
        if let directoryProblem {
            return DashboardSnapshot(now: now, stateDirectory: stateDirectory, problem: directoryProblem)
        }
        let state = SchedulerState(reading: snapshot, settings: settings, catalog: catalog, now: now)
        let pending = DashboardSnapshot.pendingRows(of: snapshot, state: state, now: now)
        var built = DashboardSnapshot(now: now, stateDirectory: stateDirectory, pending: pending)
        built.fill(records: snapshot, state: state, events: events, history: history, catalog: catalog, schedulerPID: schedulerPID, now: now)
        return built
    }

    /// Brings `current` up to date with `mirror` at `now`: the pending rows change by change
    /// (``LivePendingRows``), the rest (a few records) from the mirror's records.
    /// `configurationChanged`: ``reloadConfiguration()`` ran since the last refresh.
    func refresh(_ current: inout DashboardSnapshot, pending: inout LivePendingRows, mirror: StateMirror,
                 configurationChanged: Bool, now: Date = Date()) {
        if let problem = DirectoryProblem.describe(paths.root) {
            current = DashboardSnapshot(now: now, stateDirectory: paths.root, problem: problem)
            pending = LivePendingRows()
            return
        }
        let records = mirror.snapshotExceptRequests
        let state = pending.update(&current, mirror: mirror, records: records, settings: settings, catalog: catalog,
                                   configurationChanged: configurationChanged, now: now)
        current.fill(records: records, state: state, events: mirror.events, history: mirror.history, catalog: catalog,
                     schedulerPID: StateLock.holder(paths), now: now)
    }
}
