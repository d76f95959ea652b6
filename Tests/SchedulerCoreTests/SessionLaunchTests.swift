import Foundation
import SchedulerCore
import TaskState
import Testing

/// When a session's transfer ends, the app is launched to hear of it: once, and only when no
/// process of it would hear of it by itself.
@Suite("Session launches")
struct SessionLaunchTests {
    private let session = "com.example.news.session"

    /// A finished transfer of the session, ended at `at(10)`.
    private func finished(_ state: inout SchedulerState, _ name: String, session: String? = nil, launchEvents: Bool = true,
                          end: TransferAttemptEnd = .completed(statusCode: 200)) {
        let request = TransferRequest(app: Apps.news, identifier: ident(name), session: session ?? self.session, direction: .download,
                                      url: "http://127.0.0.1:8080/\(name)", destination: name, sessionSendsLaunchEvents: launchEvents)
        _ = state.run(.transferCreate(request), at: t0)
        _ = state.dueTransfers(at: t0)
        state.transferEnded(TaskKey(app: Apps.news, identifier: ident(name)), end, bytesTransferred: 10, bytesExpected: 10, now: at(10))
    }

    @Test func aCompletedTransferLaunchesItsAppOnceWithTheSessionAsTask() throws {
        var state = makeState()
        finished(&state, "a")
        let plans = state.dueSessionLaunches(at: at(11))
        let plan = try #require(plans.first)
        #expect(plans.count == 1)
        #expect(plan.reason == "urlSession")
        #expect(plan.requests.map(\.identifier.rawValue) == [session])
        #expect(plan.requests.first?.kind == .urlSession)
        state.recordLaunch(plan, pid: 500, processGroup: 500, processStartTicks: nil, now: at(11))
        #expect(state.tasks[TaskKey(app: Apps.news, identifier: ident(session))]?.kind == .urlSession)
        #expect(state.transfers[TaskKey(app: Apps.news, identifier: ident("a"))]?.eventsLaunchedAt == at(11))
        state.processExited(pid: 500, status: "exited with status 0", now: at(12))
        #expect(state.dueSessionLaunches(at: at(13)).isEmpty, "one launch per finished transfer")
    }

    @Test func twoSessionsGiveOneLaunchWithTwoTasks() {
        var state = makeState()
        finished(&state, "a")
        finished(&state, "b", session: "com.example.news.other")
        let plans = state.dueSessionLaunches(at: at(11))
        #expect(plans.count == 1)
        #expect(plans.first?.requests.map(\.identifier.rawValue) == ["com.example.news.other", session])
    }

    @Test func noLaunchWhenTheAppWouldHearOfItItself() {
        var state = makeState()
        finished(&state, "a")
        _ = state.run(.attach(app: Apps.news, pid: 42, identifiers: []), at: at(11))
        #expect(state.dueSessionLaunches(at: at(11)).isEmpty, "an attached process hears of it")
        _ = state.run(.detach(app: Apps.news, pid: 42), at: at(12))
        #expect(state.dueSessionLaunches(at: at(12)).count == 1)
        #expect(state.dueSessionLaunches(at: at(12), excluding: [Apps.news]).isEmpty, "launched this turn already")
    }

    @Test func noLaunchForCancelledTransfersOrWithoutLaunchEvents() {
        var state = makeState()
        finished(&state, "quiet", launchEvents: false)
        finished(&state, "dropped", end: .cancelled)
        #expect(state.dueSessionLaunches(at: at(11)).isEmpty)
    }

    @Test func aThrottledAppIsLaunchedWhenItsThrottleEndsAndTheSchedulerWakesForIt() throws {
        var state = makeState()
        finished(&state, "a")
        // An overrun: the app is throttled for the initial delay.
        _ = state.run(.beginFinishing(app: Apps.news, name: nil, pid: 77), at: at(11))
        _ = state.expire(at: at(100))
        _ = state.expire(at: at(200))
        let until = try #require(state.apps[Apps.news]?.throttledUntil)
        #expect(state.dueSessionLaunches(at: until.addingTimeInterval(-1)).isEmpty)
        #expect(state.nextWake(after: until.addingTimeInterval(-1)) == until)
        #expect(state.dueSessionLaunches(at: until).count == 1)
    }

    @Test func anAcknowledgedTransferIsGoneAndAnActiveOneCannotBeAcknowledged() {
        var state = makeState()
        finished(&state, "a")
        let done = state.run(.transferAcknowledge(app: Apps.news, identifier: ident("a")), at: at(11))
        #expect(done.outcome.error == nil)
        #expect(state.transfers.isEmpty)
        _ = state.run(.transferCreate(TransferRequest(app: Apps.news, identifier: ident("b"), direction: .download,
                                                      url: "http://127.0.0.1/b", destination: "b")), at: at(12))
        let early = state.run(.transferAcknowledge(app: Apps.news, identifier: ident("b")), at: at(12))
        #expect(early.outcome.error?.name == "invalidCommand")
    }
}
