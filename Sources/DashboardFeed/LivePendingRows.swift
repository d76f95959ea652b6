import Dashboard
import FoundationEssentials
import SchedulerCore
import StateFeed
import TaskState

/// The pending panel's rows of one dashboard snapshot, kept current from a ``StateMirror`` change
/// by change: the waits of the requests a change can touch are asked again (``PendingWaits``),
/// the rows that read differently are edited in place and moved within the sorted rows
/// (``DashboardSnapshot/editPending(_:)``). With 100 000 pending requests, one changed request
/// costs about what it costs with ten; the rows are the same as a snapshot built from scratch.
public struct LivePendingRows {
    private let waits = PendingWaits()
    private var positions = PendingRowPositions()
    private var pushKeys: Set<TaskKey> = []

    public init() {}

    /// Brings `snapshot.pending` up to date with `mirror` at `now` and answers the policy's
    /// state, which the rest of the snapshot is built from. `records` is the mirror's
    /// ``StateMirror/snapshotExceptRequests``; `configurationChanged`: the settings or manifests
    /// were read again since the last update.
    public mutating func update(_ snapshot: inout DashboardSnapshot, mirror: StateMirror, records: StateSnapshot,
                                settings: SchedulerSettings, catalog: ManifestCatalog, configurationChanged: Bool,
                                now: Date) -> SchedulerState {
        let changed = waits.update(records: records, changed: mirror.takeRequestChanges(), request: mirror.request,
                                   allKeys: { Array(mirror.requestKeys) }, settings: settings, catalog: catalog,
                                   configurationChanged: configurationChanged, now: now)
        // Set by the update just made.
        let state = waits.state!
        // Held pushes are few and their waits move with the clock (the hourly budget): all are asked.
        let pushes = Dictionary(records.pushes.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        let rows = changed.map(PendingRowPositions.Row.request) + pushKeys.union(pushes.keys).map(PendingRowPositions.Row.push)
        pushKeys = Set(pushes.keys)
        let waitsNow = waits.waits
        let edits = positions.edits(for: rows, current: snapshot.pending) { row in
            switch row {
            case .request(let key):
                guard let request = mirror.request(key), let wait = waitsNow[key] else { return nil }
                return DashboardSnapshot.PendingRow(request: request, wait: wait)
            case .push(let key):
                return pushes[key].map { DashboardSnapshot.PendingRow(push: $0, blockers: state.pushBlockers(for: $0, at: now)) }
            }
        }
        snapshot.editPending(edits)
        return state
    }
}

extension DashboardSnapshot.PendingRow {
    /// The row of `request`, which waits as `wait` says: its own blockers, the conditions' part
    /// joined when shown.
    public init(request: PendingRequest, wait: RequestWait) {
        self.init(request: request, ownBlockers: wait.ownBlockers, conditionGroup: wait.group, plannedLaunch: wait.plan?.launchAt,
                  predictedUse: wait.plan?.predictedUse?.date, usageWeek: wait.usageWeek)
        coalescingEnds = wait.coalescingEnds
    }
}
