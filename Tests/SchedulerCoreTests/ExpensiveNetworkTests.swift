import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// A metered network (the `expensive` condition) holds what does not allow expensive network
/// access: discretionary transfers by default, and requests and transfers that say so.
@Suite("Expensive network")
struct ExpensiveNetworkTests {
    @Test func aMeteredNetworkHoldsDiscretionaryTransfersButNotOthers() {
        var state = makeState(probed: Conditions(expensive: true))
        state.createTransfer(download("big", discretionary: true), at: t0)
        state.createTransfer(download("small"), at: t0)
        var allowed = download("allowed", discretionary: true)
        allowed.allowsExpensiveNetworkAccess = true
        state.createTransfer(allowed, at: t0)
        var refused = download("refused")
        refused.allowsExpensiveNetworkAccess = false
        state.createTransfer(refused, at: t0)
        #expect(state.blockers(of: "big", at: t0) == [.expensiveNetwork])
        #expect(state.blockers(of: "small", at: t0) == [])
        #expect(state.blockers(of: "allowed", at: t0) == [])
        #expect(state.blockers(of: "refused", at: t0) == [.expensiveNetwork])

        state.updateProbedConditions(Conditions(expensive: false), batteryPercent: nil, loadAverage: 0, now: at(1))
        #expect(state.blockers(of: "big", at: at(1)) == [])
    }

    @Test func aRequestWaitsOnlyWhenItDoesNotAllowExpensiveAccess() {
        var state = makeState(probed: Conditions(expensive: true))
        state.run(.submit(SubmitRequest(app: Apps.news, identifier: Tasks.refresh, kind: .appRefresh,
                                        allowsExpensiveNetworkAccess: false)), at: t0)
        state.run(.submit(SubmitRequest(app: Apps.news, identifier: Tasks.cleanup, kind: .processing)), at: t0)
        let refresh = state.requests[TaskKey(app: Apps.news, identifier: Tasks.refresh)]!
        let cleanup = state.requests[TaskKey(app: Apps.news, identifier: Tasks.cleanup)]!
        #expect(refresh.allowsExpensiveNetworkAccess == false)
        #expect(state.blockers(for: refresh, at: t0) == [.expensiveNetwork])
        #expect(!state.blockers(for: cleanup, at: t0).contains(.expensiveNetwork), "allowed by default")
        // Simulated: it waits for a person, not for a probe.
        state.run(.setConditions(ConditionOverrides(expensive: true)), at: at(1))
        #expect(!state.isWaitingOnConditions(at: at(1)))
    }

    @Test func conditionsWrittenBeforeTheFieldReadAsNotExpensive() throws {
        let old = #"{"externalPower":true,"network":true,"idle":false,"lowPower":false}"#
        let conditions = try JSONDecoder().decode(Conditions.self, from: Data(old.utf8))
        #expect(conditions == Conditions(idle: false))
        #expect(ConditionsDescription.describe(ConditionsRecord(probed: conditions, probedAt: t0))
            == "power=ac network=up idle=no lowpower=off", "the words stay as they were when nothing is metered")
        let metered = ConditionsRecord(probed: Conditions(expensive: true), probedAt: t0)
        #expect(ConditionsDescription.describe(metered).hasSuffix(" expensive=on"))
    }
}
