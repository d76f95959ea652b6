import Dashboard
import DashboardFeed
import Foundation
import SchedulerCore
import StateFeed
import TaskState
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The pending panel kept current change by change (``LivePendingRows``, ``DashboardSnapshot/editPending(_:)``)
/// against the snapshot built from scratch, as bgtop built it before: seeded random sequences of
/// changes to real state files (requests, conditions, app records, tasks, pushes, usage, the
/// clock, the settings and manifests), read through a ``StateMirror``, and after each change the
/// rows of every sort column, order and a few filters compared with a full rebuild's.
@Suite("Pending rows kept current change by change")
struct LivePendingRowsTests {
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomChangesGiveTheRowsOfAFullRebuild(seed: UInt64) throws {
        let world = try ChangingState(seed: seed)
        var live = LivePendingRows()
        var snapshot = DashboardSnapshot(now: world.now, stateDirectory: world.paths.root)
        var touched = 0
        var sawTurn = false
        for step in 0..<220 {
            // First a burst of due requests of four apps, more than the launch limit lets go.
            let change = step == 0 ? try world.burst() : try world.step()
            // A copy held across the change, as the dashboard's loop may hold one: it must still
            // show its own rows, however the live snapshot's rows were moved.
            let before = snapshot
            // The view asked for last is the one edited in place (the others are worked out
            // again when asked): a different one at each step, so every view's edits are tried.
            let focus = Self.viewStates[step % Self.viewStates.count]
            let beforeRows = before.rows(.pending, state: focus).ids
            world.mirror.apply(change.changes)
            let state = live.update(&snapshot, mirror: world.mirror, records: world.mirror.snapshotExceptRequests,
                                    settings: world.settings, catalog: world.catalog,
                                    configurationChanged: change.configuration, now: world.now)
            snapshot.now = world.now
            // As bgtop's reader fills the snapshot after the rows: the conditions they are shown under.
            snapshot.conditions = world.mirror.snapshotExceptRequests.conditions
            let full = Self.fullRebuild(world.mirror.snapshot, settings: world.settings, catalog: world.catalog, now: world.now)
            try Self.expectThePolicysBlockers(full, world.mirror.snapshot, settings: world.settings, catalog: world.catalog,
                                              now: world.now, "seed \(seed) step \(step) (\(change.name))")
            #expect(state.conditions.effective == SchedulerState(reading: world.mirror.snapshot, settings: world.settings,
                                                                 catalog: world.catalog, now: world.now).conditions.effective)
            #expect(snapshot.pending.count == full.pending.count, "seed \(seed) step \(step): \(change.name)")
            for view in Self.viewStates {
                let rows = snapshot.rows(.pending, state: view), expected = full.rows(.pending, state: view)
                #expect(rows.ids == expected.ids, "seed \(seed) step \(step) (\(change.name)), filter '\(view.filter)' column \(view.sortColumn[.pending] ?? 0) reversed \(view.sortReversed[.pending] ?? false)")
                let shown = rows.sourceIndices.map { snapshot.pending[$0] }, wanted = expected.sourceIndices.map { full.pending[$0] }
                #expect(shown == wanted, "seed \(seed) step \(step) (\(change.name)): rows differ")
                if shown != wanted { return }
            }
            #expect(before.rows(.pending, state: focus).ids == beforeRows, "a copy kept from before the change changed")
            touched += snapshot.pending.count
            if full.pending.contains(where: { $0.ownBlockers == [.coalescing] || $0.ownBlockers == [.launchLimit] }) { sawTurn = true }
        }
        #expect(touched > 0, "the changes made rows")
        #expect(world.kinds.isSuperset(of: ["request", "remove", "clock", "conditions", "app", "task", "push", "usage", "configuration"]),
                "every kind of change was tried: \(world.kinds.sorted())")
        #expect(sawTurn, "some rows were held by the launch turn (coalescing or the launch limit)")
    }

    @Test func aRequestThatReadsTheSameIsLeftWhereItIs() throws {
        let world = try ChangingState(seed: 99)
        var (live, snapshot) = try Self.withThirtyRequests(world)
        let sorted = snapshot.rows(.pending, state: Self.viewStates[0])
        let pending = snapshot.pending
        // The same file written again: read again, found the same, no edit.
        let key = world.mirror.snapshot.requests[0].key
        world.mirror.apply(try world.rewrite(key).changes)
        _ = live.update(&snapshot, mirror: world.mirror, records: world.mirror.snapshotExceptRequests, settings: world.settings,
                        catalog: world.catalog, configurationChanged: false, now: world.now)
        #expect(snapshot.pending == pending)
        #expect(snapshot.rows(.pending, state: Self.viewStates[0]).sourceIndices == sorted.sourceIndices)
    }

    /// A filter typed letter by letter leaves a view per prefix; a change keeps only the last one
    /// asked for, so the cache does not grow (nor each change's edits) for the rest of the session.
    @Test func aChangeKeepsOnlyTheViewLastAskedFor() throws {
        let world = try ChangingState(seed: 7)
        var (live, snapshot) = try Self.withThirtyRequests(world)
        var typing = DashboardState()
        for prefix in ["c", "co", "com", "com.", "com.e"] {
            typing.filter = prefix
            _ = snapshot.rows(.pending, state: typing)
        }
        world.mirror.apply(try world.addRequest().changes)
        _ = live.update(&snapshot, mirror: world.mirror, records: world.mirror.snapshotExceptRequests, settings: world.settings,
                        catalog: world.catalog, configurationChanged: false, now: world.now)
        #expect(snapshot.cachedPendingViews == [typing.filter], "only the view last asked for is carried through a change")
        let full = Self.fullRebuild(world.mirror.snapshot, settings: world.settings, catalog: world.catalog, now: world.now)
        #expect(snapshot.rows(.pending, state: typing).ids == full.rows(.pending, state: typing).ids)
    }

    /// Thirty requests written and read, and the rows worked out from them.
    static func withThirtyRequests(_ world: ChangingState) throws -> (LivePendingRows, DashboardSnapshot) {
        var live = LivePendingRows()
        var snapshot = DashboardSnapshot(now: world.now, stateDirectory: world.paths.root)
        for _ in 0..<30 { world.mirror.apply(try world.addRequest().changes) }
        _ = live.update(&snapshot, mirror: world.mirror, records: world.mirror.snapshotExceptRequests, settings: world.settings,
                        catalog: world.catalog, configurationChanged: false, now: world.now)
        return (live, snapshot)
    }

    /// Every sort column in both orders without a filter, and filters on a blocker, an app and a
    /// turn's hold.
    static let viewStates: [DashboardState] = {
        var states: [DashboardState] = []
        for column in 0..<5 {
            for reversed in [false, true] {
                var state = DashboardState()
                state.sortColumn[.pending] = column
                state.sortReversed[.pending] = reversed
                states.append(state)
            }
        }
        for filter in ["power", "a2", "coalescing", "queued", "refresh"] {
            var state = DashboardState()
            state.filter = filter
            state.sortColumn[.pending] = filter.count % 5
            states.append(state)
        }
        return states
    }()

    /// The pending rows as bgtop built them for every change before they were kept current: the
    /// whole launch turn over every request (``DashboardSnapshot/pendingRows(of:state:now:)``).
    static func fullRebuild(_ records: StateSnapshot, settings: SchedulerSettings, catalog: ManifestCatalog, now: Date) -> DashboardSnapshot {
        let state = SchedulerState(reading: records, settings: settings, catalog: catalog, now: now)
        let pending = DashboardSnapshot.pendingRows(of: records, state: state, now: now)
        return DashboardSnapshot(now: now, stateDirectory: "/full", conditions: records.conditions, pending: pending)
    }

    /// Each request's row, its own blockers joined with its group's under the snapshot's
    /// conditions, shows what the scheduler's policy says holds it: the launch turn's word, or
    /// the request's blockers.
    static func expectThePolicysBlockers(_ snapshot: DashboardSnapshot, _ records: StateSnapshot, settings: SchedulerSettings,
                                         catalog: ManifestCatalog, now: Date, _ context: String) throws {
        let state = SchedulerState(reading: records, settings: settings, catalog: catalog, now: now)
        let turn = state.launchTurn(at: now)
        let requests = Dictionary(records.requests.map { ($0.key, $0) }, uniquingKeysWith: { a, _ in a })
        for row in snapshot.pending where row.push == nil {
            let request = try #require(requests[row.request.key])
            let policy = turn.blockers[request.key] ?? state.blockers(for: request, at: now)
            #expect(row.blockers(under: snapshot.rowConditions) == policy, "\(context): \(request.key)")
            if row.blockers(under: snapshot.rowConditions) != policy { return }
        }
    }
}
