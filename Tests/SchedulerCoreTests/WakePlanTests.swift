import Foundation
import SchedulerCore
import TaskState
import Testing

/// `wakePlan(after:)` answers what `nextWake(after:)` and `isWaitingOnConditions(at:)` answer, from
/// one look at the requests: through coalescing holds, the launch limit, dates and conditions.
@Suite struct WakePlanTests {
    static func expectSame(_ state: SchedulerState, at times: [Date], sourceLocation: SourceLocation = #_sourceLocation) {
        for now in times {
            let plan = state.wakePlan(after: now)
            #expect(plan.nextWake == state.nextWake(after: now), "next wake at \(now)", sourceLocation: sourceLocation)
            #expect(plan.isWaitingOnConditions == state.isWaitingOnConditions(at: now), "waiting on conditions at \(now)",
                    sourceLocation: sourceLocation)
        }
    }

    static let times = [t0, at(50), at(100), at(104), at(106), at(112), at(113), at(200), at(10_000)]

    @Test func throughACoalescingHold() {
        Self.expectSame(CrossAppCoalescingTests.fiveApps(), at: Self.times)
    }

    @Test func throughTheLaunchLimit() {
        Self.expectSame(CrossAppCoalescingTests.fiveApps(window: 0, maxConcurrent: 1), at: Self.times)
    }

    @Test func withRequestsThatWaitOnConditionsReadFromTheFiles() {
        var state = CrossAppCoalescingTests.state(probed: Conditions(externalPower: false, network: false, idle: false))
        let apps = CrossAppCoalescingTests.apps
        state.submitRequest(CrossAppCoalescingTests.refresh(apps[0]), app: apps[0], kind: .appRefresh, earliest: at(100), network: true, at: t0)
        state.submitRequest(ident("\(apps[1]).clean"), app: apps[1], kind: .processing, power: true, at: t0)
        state.submitRequest(CrossAppCoalescingTests.refresh(apps[2]), app: apps[2], kind: .appRefresh, earliest: at(104), at: t0)
        #expect(state.isWaitingOnConditions(at: at(200)), "the case is one that waits on conditions")
        Self.expectSame(state, at: Self.times)
    }
}
