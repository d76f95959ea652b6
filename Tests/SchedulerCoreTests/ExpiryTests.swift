import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Expiry, kills and throttling")
struct ExpiryTests {
    /// A state with one refresh task of `news` launched at `start` with pid 500.
    private func running(at start: Date = t0, settings: SchedulerSettings = SchedulerSettings()) -> SchedulerState {
        var state = makeState(settings: settings)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: start)
        state.launchDue(at: start, firstPID: 500)
        _ = state.takeChanges()
        return state
    }

    @Test func nothingHappensBeforeTheDeadline() {
        var state = running()
        #expect(state.expire(at: at(29.999)).isEmpty)
        #expect(state.takeChanges().isEmpty)
        #expect(state.task(Tasks.refresh)?.state == .running)
    }

    @Test func atTheDeadlineTheAppIsToldThenKilledAfterTheGrace() throws {
        var state = running()
        let key = state.key(Tasks.refresh)

        let notify = state.expire(at: at(30))
        #expect(notify == [.notifyExpiration(pid: 500, signal: "SIGUSR1", tasks: [key])])
        let expiring = try #require(state.task(Tasks.refresh))
        #expect(expiring.state == .expiring)
        #expect(expiring.expiringSince == at(30))
        #expect(expiring.killDeadline == at(35))
        var changes = state.takeChanges()
        #expect(changes.tasks == [key])
        #expect(changes.eventTypes == [.expired])
        #expect(changes.events.first?.reason == "SIGUSR1")
        #expect(changes.events.first?.message == "com.example.news: com.example.news.refresh expired; pid 500 sent SIGUSR1, killed in 5 s unless it completes")

        #expect(state.expire(at: at(30)).isEmpty, "an expiring task is told once")
        #expect(state.expire(at: at(34.999)).isEmpty, "the grace period is not over")
        #expect(state.takeChanges().isEmpty)

        let kill = state.expire(at: at(35))
        #expect(kill == [.kill(pid: 500, processGroup: 500, tasks: [key])])
        #expect(state.tasks.isEmpty)
        let record = try #require(state.apps[Apps.news])
        #expect(record.killCount == 1)
        #expect(record.throttleLevel == 1)
        #expect(record.throttledUntil == at(95))
        changes = state.takeChanges()
        #expect(changes.tasks == [key])
        #expect(changes.apps == [Apps.news])
        #expect(changes.eventTypes == [.killed, .throttled])
        #expect(changes.events.last?.reason == "level 1")
        #expect(state.expire(at: at(100)).isEmpty)
    }

    /// A task the expiry alarm expired just before the scheduler stopped (its file says
    /// `expiring`, with its expiry not recorded): the next scheduler records the expiry as of
    /// when the alarm fired, sends no second signal, and keeps the alarm's kill deadline.
    @Test func anExpiryTheAlarmLeftUnrecordedIsRecordedOnceWithoutASecondSignal() throws {
        var alarmed = try #require(running().task(Tasks.refresh))
        alarmed.state = .expiring
        alarmed.expiringSince = at(30)
        alarmed.killDeadline = at(35)
        alarmed.unrecordedExpiry = true
        var snapshot = StateSnapshot()
        snapshot.tasks = [alarmed]
        var state = SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(), snapshot: snapshot,
                                   conditions: ConditionsRecord(probed: Conditions(), probedAt: at(40)))
        state.recordUnrecordedExpiries()
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.expired])
        #expect(changes.events.first?.time == at(30))
        #expect(changes.events.first?.message == "com.example.news: com.example.news.refresh expired; pid 500 sent SIGUSR1, killed in 5 s unless it completes")
        let task = try #require(state.task(Tasks.refresh))
        #expect(task.unrecordedExpiry == nil && task.state == .expiring && task.killDeadline == at(35))
        #expect(state.apps[Apps.news]?.activity?.hours.map(\.expiries).reduce(0, +) == 1)
        state.recordUnrecordedExpiries()
        #expect(state.takeChanges().isEmpty, "recorded once")
        #expect(state.expire(at: at(34)).isEmpty, "no second signal, and no kill before the alarm's deadline")
        #expect(state.expire(at: at(35)).contains { if case .kill = $0 { return true } else { return false } })
    }

    @Test func aLateWakeStillGivesTheFullGrace() throws {
        var state = running()
        _ = state.expire(at: at(100))
        #expect(state.task(Tasks.refresh)?.killDeadline == at(105))
        #expect(state.expire(at: at(104)).isEmpty)
        #expect(state.expire(at: at(105)).count == 1)
    }

    @Test func withoutGraceTheKillFollowsAtOnce() {
        var settings = SchedulerSettings()
        settings.expirationGraceSeconds = 0
        var state = running(settings: settings)
        let key = state.key(Tasks.refresh)
        let actions = state.expire(at: at(30))
        #expect(actions == [.notifyExpiration(pid: 500, signal: "SIGUSR1", tasks: [key]),
                            .kill(pid: 500, processGroup: 500, tasks: [key])])
        #expect(state.tasks.isEmpty)
    }

    @Test func tasksOfOneLaunchShareTheProcessAndItsKill() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, at: t0)
        state.launchDue(at: t0, firstPID: 600)
        #expect(state.tasks.count == 3)

        // The refresh budget runs out first; the processing tasks still have time.
        let notify = state.expire(at: at(30))
        #expect(notify == [.notifyExpiration(pid: 600, signal: "SIGUSR1", tasks: [state.key(Tasks.refresh)])])
        #expect(state.task(Tasks.cleanup)?.state == .running)
        // Killing the process ends every task it carried.
        let kill = state.expire(at: at(35))
        #expect(kill == [.kill(pid: 600, processGroup: 600,
                               tasks: [state.key(Tasks.backup), state.key(Tasks.cleanup), state.key(Tasks.refresh)])])
        #expect(state.tasks.isEmpty)
        #expect(state.apps[Apps.news]?.throttleLevel == 1, "one kill, one throttle step")

        // Two processing tasks expiring together: one signal to their process.
        var together = makeState()
        together.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        together.submitRequest(Tasks.backup, kind: .processing, at: t0)
        together.launchDue(at: t0, firstPID: 700)
        #expect(together.expire(at: at(600)) == [.notifyExpiration(pid: 700, signal: "SIGUSR1",
                                                                   tasks: [together.key(Tasks.backup), together.key(Tasks.cleanup)])])
    }

    @Test func theManifestChoosesTheSignal() {
        var state = makeState()
        state.submitRequest(ident("com.example.mail.refresh"), app: Apps.mail, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 800)
        #expect(state.expire(at: at(30)) == [.notifyExpiration(pid: 800, signal: "SIGTERM",
                                                               tasks: [state.key(ident("com.example.mail.refresh"), app: Apps.mail)])])
    }

    /// Overruns the refresh budget once, starting when the throttle allows; returns the kill time.
    private func overrun(_ state: inout SchedulerState, from now: Date) -> Date {
        var start = now
        if let until = state.apps[Apps.news]?.throttledUntil, until > start { start = until }
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: start)
        #expect(state.launchDue(at: start).count == 1)
        _ = state.expire(at: start.addingTimeInterval(30))
        let killed = start.addingTimeInterval(35)
        #expect(state.expire(at: killed).count == 1)
        return killed
    }

    @Test func theThrottleDoublesWithEachOverrunInARowUpToTheMaximum() throws {
        var settings = SchedulerSettings()
        settings.throttleMaximumSeconds = 300
        var state = makeState(settings: settings)
        var now = t0
        var delays: [TimeInterval] = []
        for _ in 0..<6 {
            now = overrun(&state, from: now)
            let until = try #require(state.apps[Apps.news]?.throttledUntil)
            delays.append(until.timeIntervalSince(now))
        }
        #expect(delays == [60, 120, 240, 300, 300, 300])
        #expect(state.apps[Apps.news]?.throttleLevel == 6)
        #expect(state.apps[Apps.news]?.killCount == 6)
    }

    @Test func aCleanCompletionResetsTheThrottle() throws {
        var state = makeState()
        var now = overrun(&state, from: t0)
        now = overrun(&state, from: now)
        #expect(state.apps[Apps.news]?.throttleLevel == 2)
        #expect(state.apps[Apps.news]?.throttledUntil == now.addingTimeInterval(120))

        // The next launch completes within its budget.
        let start = now.addingTimeInterval(120)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: start)
        state.launchDue(at: start)
        _ = state.takeChanges()
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: start.addingTimeInterval(29))
        let record = try #require(state.apps[Apps.news])
        #expect(record.throttleLevel == 0)
        #expect(record.throttledUntil == nil)
        #expect(record.killCount == 2, "the kill history stays")
        #expect(state.takeChanges().apps == [Apps.news])

        // The next overrun starts again at the first delay.
        let killed = overrun(&state, from: start.addingTimeInterval(100))
        #expect(state.apps[Apps.news]?.throttledUntil == killed.addingTimeInterval(60))
        #expect(state.apps[Apps.news]?.throttleLevel == 1)
    }

    @Test func completingDuringTheGraceAvoidsTheKillButKeepsTheLevel() throws {
        var state = makeState()
        let now = overrun(&state, from: t0) // level 1
        let start = now.addingTimeInterval(60)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: start)
        state.launchDue(at: start)
        _ = state.expire(at: start.addingTimeInterval(30))
        let result = state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: start.addingTimeInterval(32))
        #expect(result.outcome.message == "completed com.example.news.refresh successfully after its expiration")
        #expect(state.expire(at: start.addingTimeInterval(35)).isEmpty, "nothing left to kill")
        let record = try #require(state.apps[Apps.news])
        #expect(record.throttleLevel == 1, "a late completion is not a clean run")
        #expect(record.killCount == 1)
    }
}
