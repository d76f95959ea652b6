import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Blockers")
struct BlockerTests {
    private func blockers(_ state: SchedulerState, _ identifier: Identifier, app: Identifier = Apps.news, at now: Date) -> [Blocker] {
        guard let request = state.request(identifier, app: app) else {
            Issue.record("no pending \(identifier)")
            return []
        }
        return state.blockers(for: request, at: now)
    }

    @Test func earliestBeginDateBlocksUntilItComes() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(2 * hour), at: t0)
        #expect(blockers(state, Tasks.refresh, at: t0) == [.earliestBeginDate])
        #expect(blockers(state, Tasks.refresh, at: at(2 * hour - 0.001)) == [.earliestBeginDate])
        #expect(blockers(state, Tasks.refresh, at: at(2 * hour)) == [])
        #expect(state.dueLaunches(at: at(2 * hour - 0.001)).isEmpty)
        #expect(state.dueLaunches(at: at(2 * hour)).count == 1)
    }

    @Test func externalPowerBlocksUntilTheProbeSeesMains() {
        var state = makeState(probed: Conditions(externalPower: false))
        state.submitRequest(Tasks.backup, kind: .processing, power: true, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        #expect(blockers(state, Tasks.backup, at: t0) == [.externalPower])
        #expect(blockers(state, Tasks.cleanup, at: t0) == [], "only a request that asks for power waits for it")
        #expect(state.dueLaunches(at: t0).first?.requests.map(\.identifier) == [Tasks.cleanup])
        _ = state.takeChanges()

        state.updateProbedConditions(Conditions(externalPower: true), batteryPercent: 90, loadAverage: 0.2, now: at(30))
        #expect(blockers(state, Tasks.backup, at: at(30)) == [])
        let changes = state.takeChanges()
        #expect(changes.conditions)
        #expect(changes.eventTypes == [.conditionsChanged])
        #expect(state.conditions.effective.externalPower)
    }

    @Test func networkBlocksUntilItIsBack() {
        var state = makeState()
        state.submitRequest(Tasks.backup, kind: .processing, network: true, at: t0)
        #expect(blockers(state, Tasks.backup, at: t0) == [])
        let result = state.run(.setConditions(ConditionOverrides(network: false)), at: at(1))
        #expect(result.outcome.message == "conditions: power=ac network=down (simulated) idle=yes lowpower=off")
        #expect(blockers(state, Tasks.backup, at: at(1)) == [.network])
        #expect(state.dueLaunches(at: at(1)).isEmpty)
        state.run(.clearConditions, at: at(2))
        #expect(blockers(state, Tasks.backup, at: at(2)) == [])
    }

    @Test func processingWaitsForAnIdleMachineButRefreshDoesNot() {
        var state = makeState(probed: Conditions(idle: false))
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        #expect(blockers(state, Tasks.cleanup, at: t0) == [.idle])
        #expect(blockers(state, Tasks.refresh, at: t0) == [])
        state.updateProbedConditions(Conditions(idle: true), batteryPercent: nil, loadAverage: 0.1, now: at(30))
        #expect(blockers(state, Tasks.cleanup, at: at(30)) == [])
    }

    @Test func aThrottledAppWaitsUntilTheThrottleEnds() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0)
        // Overrun: deadline at 30 s, killed at 35 s, throttled for 60 s.
        _ = state.expire(at: at(30))
        _ = state.expire(at: at(35))
        #expect(state.apps[Apps.news]?.throttledUntil == at(95))

        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(40))
        #expect(blockers(state, Tasks.refresh, at: at(40)) == [.throttled])
        #expect(blockers(state, Tasks.refresh, at: at(94.999)) == [.throttled])
        #expect(state.dueLaunches(at: at(94.999)).isEmpty)
        #expect(blockers(state, Tasks.refresh, at: at(95)) == [])
        #expect(state.dueLaunches(at: at(95)).count == 1)
    }

    @Test func aDisabledAppIsBlockedUntilEnabled() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.run(.setAppEnabled(app: Apps.news, enabled: false), at: at(1))
        #expect(blockers(state, Tasks.refresh, at: at(1)) == [.appDisabled])
        #expect(state.dueLaunches(at: at(1)).isEmpty)
        state.run(.setAppEnabled(app: Apps.news, enabled: true), at: at(2))
        #expect(blockers(state, Tasks.refresh, at: at(2)) == [])
    }

    @Test func lowPowerBlocksEveryKindUntilItEnds() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.run(.setConditions(ConditionOverrides(lowPower: true)), at: at(1))
        #expect(blockers(state, Tasks.refresh, at: at(1)) == [.lowPower])
        #expect(blockers(state, Tasks.cleanup, at: at(1)) == [.lowPower])
        #expect(state.dueLaunches(at: at(1)).isEmpty)
        state.run(.setConditions(ConditionOverrides(lowPower: false)), at: at(2))
        #expect(blockers(state, Tasks.refresh, at: at(2)) == [])
        #expect(blockers(state, Tasks.cleanup, at: at(2)) == [])
    }

    @Test func aRequestWaitsWhileATaskWithItsIdentifierRuns() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0)
        // The handler submits the next refresh before completing.
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(5))
        #expect(blockers(state, Tasks.refresh, at: at(5)) == [.alreadyRunning])
        #expect(state.dueLaunches(at: at(5)).isEmpty)
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(6))
        #expect(blockers(state, Tasks.refresh, at: at(6)) == [])
    }

    @Test func aRequestWhoseManifestWentAwayIsBlocked() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        var catalog = makeCatalog()
        catalog.manifests[Apps.news] = nil
        state.updateCatalog(catalog, now: at(1))
        #expect(blockers(state, Tasks.refresh, at: at(1)) == [.noManifest])
        #expect(state.dueLaunches(at: at(1)).isEmpty)
    }

    @Test func severalBlockersAreListedInAFixedOrder() {
        var state = makeState(probed: Conditions(externalPower: false, network: false, idle: false, lowPower: true))
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(hour), network: true, power: true, at: t0)
        state.run(.setAppEnabled(app: Apps.news, enabled: false), at: t0)
        #expect(blockers(state, Tasks.backup, at: t0) == [.earliestBeginDate, .externalPower, .network, .idle, .appDisabled, .lowPower])
    }

    @Test func blockerKinds() {
        #expect(Blocker.allCases.filter(\.isTimed) == [.earliestBeginDate, .throttled, .predictedUse, .rarelyUsed, .usageRate])
        #expect(Blocker.externalPower.condition == .power)
        #expect(Blocker.network.condition == .network)
        #expect(Blocker.idle.condition == .idle)
        #expect(Blocker.lowPower.condition == .lowpower)
        #expect(Blocker.appDisabled.condition == nil && Blocker.alreadyRunning.condition == nil)
    }
}
