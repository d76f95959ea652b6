import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Next wake and waiting on conditions")
struct NextWakeTests {
    @Test func nothingWaitsOnTimeInAnEmptyState() {
        let state = makeState()
        #expect(state.nextWake(after: t0) == nil)
        #expect(!state.isWaitingOnConditions(at: t0))
    }

    @Test func theEarliestBeginDateOfAPendingRequest() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(5 * hour), at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(3 * hour), at: t0)
        #expect(state.nextWake(after: t0) == at(3 * hour))
        #expect(!state.isWaitingOnConditions(at: t0), "only time holds them")
    }

    @Test func theDeadlineOfARunningTaskThenItsKillDeadline() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0)
        #expect(state.nextWake(after: t0) == at(30))
        _ = state.expire(at: at(30))
        #expect(state.nextWake(after: at(30)) == at(35))
        _ = state.expire(at: at(35))
        #expect(state.nextWake(after: at(35)) == nil, "the kill leaves nothing waiting")
    }

    @Test func theSoonestOfEverything() {
        var settings = SchedulerSettings()
        settings.coalescingWindowSeconds = 60
        var state = makeState(settings: settings)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.launchDue(at: t0) // deadline 600
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(400), at: at(1))
        state.submitRequest(ident("com.example.mail.refresh"), app: Apps.mail, kind: .appRefresh, earliest: at(900), at: at(1))
        #expect(state.nextWake(after: at(1)) == at(400))
        #expect(state.nextWake(after: at(1)) == [at(400), at(600), at(900)].min())
    }

    @Test func theEndOfAThrottle() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0)
        _ = state.expire(at: at(30))
        _ = state.expire(at: at(35)) // throttled until 95
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(40))
        #expect(state.nextWake(after: at(40)) == at(95))
        // A later earliest date wins over an earlier throttle end.
        state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(200), at: at(41))
        #expect(state.nextWake(after: at(41)) == at(200))
    }

    @Test func theEndOfACoalescingHold() {
        var state = makeState()
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(100), at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(140), at: t0)
        #expect(state.nextWake(after: t0) == at(140), "the first would be held for the second: no wake-up at 100")
        #expect(state.dueLaunches(at: at(100)).isEmpty, "a turn at 100 (a command's) holds it")
        #expect(state.nextWake(after: at(100)) == at(140))
        #expect(state.dueLaunches(at: at(140)).first?.requests.count == 2)
    }

    @Test func requestsHeldByConditionsOrSwitchesDoNotWaitOnTime() {
        var state = makeState(probed: Conditions(network: false))
        state.submitRequest(Tasks.backup, kind: .processing, network: true, at: t0)
        #expect(state.nextWake(after: t0) == nil)
        #expect(state.isWaitingOnConditions(at: t0), "a probe may bring the network back")

        // With a date as well, the condition still has to be looked at.
        var dated = makeState(probed: Conditions(network: false))
        dated.submitRequest(Tasks.backup, kind: .processing, earliest: at(hour), network: true, at: t0)
        #expect(dated.nextWake(after: t0) == nil)
        #expect(dated.isWaitingOnConditions(at: t0))

        // A simulated condition is not probed again.
        var simulated = makeState()
        simulated.submitRequest(Tasks.backup, kind: .processing, network: true, at: t0)
        simulated.run(.setConditions(ConditionOverrides(network: false)), at: t0)
        #expect(!simulated.isWaitingOnConditions(at: t0))

        // A disabled app waits for a person, not for time or a probe.
        var disabled = makeState(probed: Conditions(idle: false))
        disabled.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(hour), at: t0)
        disabled.run(.setAppEnabled(app: Apps.news, enabled: false), at: t0)
        #expect(disabled.nextWake(after: t0) == nil)
        #expect(!disabled.isWaitingOnConditions(at: t0))
    }

    @Test func probedLowPowerAndIdleAreWaitedOn() {
        var state = makeState(probed: Conditions(externalPower: false, idle: false, lowPower: true))
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        #expect(state.isWaitingOnConditions(at: t0))
        state.updateProbedConditions(Conditions(), batteryPercent: 100, loadAverage: 0, now: at(30))
        #expect(!state.isWaitingOnConditions(at: at(30)), "runnable now: nothing to wait for")
        #expect(state.dueLaunches(at: at(30)).count == 1)
    }

    @Test func aRunnableRequestIsNotWaitingOnConditions() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        #expect(!state.isWaitingOnConditions(at: t0))
    }
}
