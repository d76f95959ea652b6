import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// The relaunch rate limiter: a transfer created during a background launch waits a delay that
/// grows with each launch since a person last used the app.
@Suite("Relaunch delay")
struct RelaunchDelayTests {
    /// Launches news for its refresh (simulated, as a developer would) with `pid`, creates transfer
    /// `name` from that process, and completes the task.
    private func launchAndCreate(_ state: inout SchedulerState, _ name: String, pid: Int32, at now: Date) throws -> TransferRecord {
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: now)
        let plan = try #require(state.run(.simulateLaunch(identifier: Tasks.refresh, app: Apps.news), at: now).launch)
        state.recordLaunch(plan, pid: pid, processGroup: pid, processStartTicks: 1, now: now)
        state.createTransfer(download(name), at: now, issuerPID: pid)
        _ = state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: now)
        return try #require(state.transfer(name))
    }

    @Test("the sequence: 0 for the first background launch, then 60 s doubling, at most an hour")
    func sequence() {
        #expect((1...10).map { SchedulerState.relaunchDelay(backgroundLaunches: $0) }
                == [0, 60, 120, 240, 480, 960, 1920, 3600, 3600, 3600])
        #expect(SchedulerState.relaunchDelay(backgroundLaunches: 0) == 0)
        #expect(SchedulerState.relaunchDelay(backgroundLaunches: .max) == 3600)
    }

    @Test("each background launch lengthens the delay of what it creates; a person's use sets it back to 0")
    func growsAndResets() throws {
        var state = makeState()
        var now = t0
        for (launch, delay) in [0.0, 60, 120, 240].enumerated() {
            let record = try launchAndCreate(&state, "t\(launch + 1)", pid: 5000 + Int32(launch), at: now)
            #expect(record.relaunchDelayUntil == (delay > 0 ? now.addingTimeInterval(delay) : nil), "launch \(launch + 1)")
            #expect(state.apps[Apps.news]?.backgroundLaunchesSinceUse == launch + 1)
            now = now.addingTimeInterval(10)
        }
        #expect(state.takeChanges().events.last { $0.type == .transferCreated }?.message
                == "com.example.news: download t4 of http://127.0.0.1:8080/t4 created, discretionary, relaunch delay 240 s")

        _ = state.run(.appUsed(app: Apps.news, uses: [now]), at: now)
        #expect(state.apps[Apps.news]?.backgroundLaunchesSinceUse == 0)
        #expect(try launchAndCreate(&state, "fresh", pid: 6000, at: now).relaunchDelayUntil == nil, "the first launch after a use")
        // A transfer a person's own process creates (no task, no token) never waits.
        state.createTransfer(download("foreground"), at: now, issuerPID: 7000)
        #expect(state.transfer("foreground")?.relaunchDelayUntil == nil)
    }

    @Test("the delay is a blocker with its end, wakes the scheduler at that end, and simulate-launch lifts it")
    func blockerWakeAndLift() throws {
        var state = makeState()
        _ = try launchAndCreate(&state, "first", pid: 5000, at: t0)
        let held = try launchAndCreate(&state, "held", pid: 5001, at: at(1))
        let until = try #require(held.relaunchDelayUntil)
        #expect(until == at(61))
        #expect(state.blockers(of: "held", at: at(60.999)) == [.relaunchDelay])
        #expect(state.blockers(of: "held", at: at(61)).isEmpty)
        _ = state.dueTransfers(at: at(1))
        #expect(state.transfer("held")?.state == .waiting)
        #expect(state.nextTransferWake(after: at(2)) == until)

        let lifted = state.run(.simulateLaunch(identifier: ident("held"), app: Apps.news), at: at(2))
        #expect(lifted.outcome.message == "lifted the relaunch delay of transfer held of com.example.news")
        #expect(lifted.launch == nil, "no process is launched for it")
        #expect(state.transfer("held")?.relaunchDelayUntil == nil)
        let event = state.takeChanges().events.last { $0.type == .transferResumed }
        #expect(event?.reason == "relaunchDelayLifted" && event?.identifier == ident("held") && event?.command != nil,
                "the lift is in the event log: \(String(describing: event))")
        #expect(state.blockers(of: "held", at: at(2)).isEmpty)
        // Not held any more: simulate-launch of it is a task request's again, and there is none.
        let again = state.run(.simulateLaunch(identifier: ident("held"), app: Apps.news), at: at(3))
        #expect(again.outcome.error != nil)
    }
}
