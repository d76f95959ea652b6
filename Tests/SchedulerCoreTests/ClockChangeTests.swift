import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// Budgets count awake time: a suspend (the boot-time clock moves, the monotonic one does not) or
/// a wall-clock change moves running tasks' deadlines with the wall clock, so nothing expires for
/// either; `earliestBeginDate`s stay wall-clock dates, and what came due while asleep runs together.
@Suite("Suspend and clock changes")
struct ClockChangeTests {
    /// A running refresh of news launched at `t0` (30 s budget).
    private func running() throws -> SchedulerState {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let plan = try #require(state.run(.simulateLaunch(identifier: Tasks.refresh, app: Apps.news), at: t0).launch)
        state.recordLaunch(plan, pid: 700, processGroup: 700, processStartTicks: 1, now: t0)
        return state
    }

    private func reading(wall seconds: Double, awake: Double, boot: Double) -> ClockReading {
        ClockReading(wall: at(seconds), awake: 1000 + awake, sinceBoot: 5000 + boot)
    }

    @Test func aSuspendMovesTheDeadlineSoTheBudgetCountsAwakeTime() throws {
        var state = try running()
        let deadline = try #require(state.task(Tasks.refresh)).deadline
        #expect(state.noteClocks(reading(wall: 10, awake: 10, boot: 10)) == nil, "the first reading only sets the base")
        _ = state.takeChanges()
        // 10 s awake, then the lid closed for an hour: the wall and boot clocks moved 3600 s more than the monotonic one.
        let changeChange = state.noteClocks(reading(wall: 3620, awake: 20, boot: 3620))
        let change = try #require(changeChange)
        #expect(change.asleep == 3600 && change.jump == 0)
        #expect(state.task(Tasks.refresh)?.deadline == deadline.addingTimeInterval(3600))
        #expect(state.expire(at: at(3620)).isEmpty, "20 s of a 30 s budget used: nothing expires")
        #expect(state.task(Tasks.refresh)?.state == .running)
        let event = try #require(state.takeChanges().events.first { $0.type == .clockChanged })
        #expect(event.reason == "suspend")
        #expect(event.message == "the machine was asleep for 3600 s; the deadlines of 1 running task moved 3600 s with it")
        // Awake time goes on counting: 10 s later the budget is spent.
        #expect(!state.expire(at: at(3631)).isEmpty)
    }

    @Test func aWallClockSetForwardExpiresNothingAndOneSetBackDoesNotExtendABudget() throws {
        var state = try running()
        let deadline = try #require(state.task(Tasks.refresh)).deadline
        state.noteClocks(reading(wall: 5, awake: 5, boot: 5))
        _ = state.takeChanges()
        // `date -s` two hours ahead, 1 s after the last turn.
        let forwardChange = state.noteClocks(reading(wall: 7206, awake: 6, boot: 6))
        let forward = try #require(forwardChange)
        #expect(forward.jump == 7200 && forward.asleep == 0)
        #expect(state.expire(at: at(7206)).isEmpty)
        #expect(state.task(Tasks.refresh)?.deadline == deadline.addingTimeInterval(7200))
        #expect(state.takeChanges().events.first { $0.type == .clockChanged }?.message
                == "the wall clock was set forward 7200 s; the deadlines of 1 running task moved 7200 s with it")
        // Then set back by an hour: the deadline follows, 23 s of the budget still left (7 s used).
        let backChange = state.noteClocks(reading(wall: 3607, awake: 7, boot: 7))
        let back = try #require(backChange)
        #expect(back.jump == -3600)
        #expect(state.task(Tasks.refresh)?.deadline == deadline.addingTimeInterval(3600))
        #expect(state.expire(at: at(3629)).isEmpty)
        #expect(!state.expire(at: at(3630)).isEmpty)
    }

    @Test func jitterIsNotAChangeAndAnIdleSchedulerOnlyNotes() throws {
        var state = try running()
        state.noteClocks(reading(wall: 1, awake: 1, boot: 1))
        #expect(state.noteClocks(reading(wall: 2.4, awake: 2, boot: 2)) == nil, "under a second is the clocks' own jitter")
        var idle = makeState()
        idle.noteClocks(reading(wall: 0, awake: 0, boot: 0))
        _ = idle.takeChanges()
        let noted = idle.noteClocks(reading(wall: 600, awake: 1, boot: 600))
        let change = try #require(noted)
        #expect(change.asleep == 599)
        #expect(idle.takeChanges().events.first { $0.type == .clockChanged }?.message == "the machine was asleep for 599 s")
    }

    @Test func whatCameDueWhileAsleepRunsTogetherInTheTurnAfter() throws {
        var state = makeState()
        for (n, seconds) in [100.0, 900, 1800].enumerated() {
            state.submitRequest(Tasks.processing(n), kind: .processing, earliest: at(seconds), at: t0)
        }
        state.noteClocks(reading(wall: 10, awake: 10, boot: 10))
        _ = state.takeChanges()
        state.noteClocks(reading(wall: 3610, awake: 11, boot: 3610))
        #expect(state.takeChanges().events.first { $0.type == .clockChanged }?.message
                == "the machine was asleep for 3599 s; 3 requests came due meanwhile and run together")
        let plans = state.launchDue(at: at(3610))
        #expect(plans.count == 1 && plans.first?.requests.count == 3, "one launch carries all three")
    }
}
