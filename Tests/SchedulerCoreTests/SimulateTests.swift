import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Simulated launch and expiration")
struct SimulateTests {
    @Test func simulatedLaunchIgnoresTheDateAndConstraints() throws {
        var state = makeState(probed: Conditions(externalPower: false, network: false, idle: false))
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(3 * day), network: true, power: true, at: t0)
        #expect(state.dueLaunches(at: at(10)).isEmpty)
        _ = state.takeChanges()

        let result = state.run(.simulateLaunch(identifier: Tasks.backup, app: nil), at: at(10))
        #expect(result.outcome.succeeded)
        #expect(result.outcome.message == "launching com.example.news for com.example.news.backup")
        #expect(result.outcome.identifier == Tasks.backup)
        let plan = try #require(result.launch)
        #expect(plan.app == Apps.news)
        #expect(plan.requests.map(\.identifier) == [Tasks.backup])
        #expect(plan.reason == "simulated")
        #expect(plan.simulated)
        #expect(state.request(Tasks.backup) != nil, "consumed only when the launch is recorded")

        state.recordLaunch(plan, pid: 900, processGroup: 900, processStartTicks: nil, now: at(10))
        let task = try #require(state.task(Tasks.backup))
        #expect(task.simulated)
        #expect(task.launchReason == "simulated")
        #expect(task.deadline == at(610))
        #expect(state.requests.isEmpty)
        let launched = state.takeChanges().events.filter { $0.type == .launched }
        #expect(launched.count == 1)
        #expect(launched.first?.reason == "simulated")
    }

    @Test func simulatedLaunchOfAnUnscheduledIdentifier() {
        var state = makeState()
        let result = state.run(.simulateLaunch(identifier: Tasks.refresh, app: nil), at: t0)
        #expect(result.errorName == "noSuchRequest")
        #expect(result.errorMessage == "no task request with identifier com.example.news.refresh has been scheduled")
        #expect(result.launch == nil)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.refused])
        #expect(changes.events.first?.reason == "noSuchRequest")

        // Pending for another app only.
        state.submitRequest(Tasks.shared, app: Apps.mail, kind: .processing, at: t0)
        #expect(state.run(.simulateLaunch(identifier: Tasks.shared, app: Apps.news), at: t0).errorName == "noSuchRequest")
        #expect(state.run(.simulateLaunch(identifier: Tasks.shared, app: Apps.mail), at: t0).launch?.app == Apps.mail)
    }

    @Test func aLaunchedRequestIsConsumedSoASecondSimulatedLaunchFindsNothingPending() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let first = state.run(.simulateLaunch(identifier: Tasks.refresh, app: nil), at: t0)
        if let plan = first.launch { state.recordLaunch(plan, pid: 1, processGroup: 1, processStartTicks: nil, now: t0) }
        let second = state.run(.simulateLaunch(identifier: Tasks.refresh, app: nil), at: at(1))
        #expect(second.errorName == "noSuchRequest")
    }

    @Test func simulatedLaunchWhileATaskWithThatIdentifierRuns() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(hour), at: at(2))
        _ = state.takeChanges()
        let result = state.run(.simulateLaunch(identifier: Tasks.refresh, app: nil), at: at(3))
        #expect(result.errorName == "alreadyRunning")
        #expect(result.errorMessage == "task with identifier com.example.news.refresh is already running")
        #expect(result.launch == nil)
        #expect(state.request(Tasks.refresh) != nil)
        #expect(state.takeChanges().eventTypes == [.refused])
    }

    @Test func anIdentifierPendingForTwoAppsNeedsTheApp() {
        var state = makeState()
        state.submitRequest(Tasks.shared, app: Apps.news, kind: .processing, at: t0)
        state.submitRequest(Tasks.shared, app: Apps.mail, kind: .processing, at: t0)
        let result = state.run(.simulateLaunch(identifier: Tasks.shared, app: nil), at: t0)
        #expect(result.errorName == "ambiguous")
        #expect(result.errorMessage == "identifier shared.task is pending for several apps (com.example.mail, com.example.news); pass --app")
        #expect(state.run(.simulateLaunch(identifier: Tasks.shared, app: Apps.news), at: t0).launch?.app == Apps.news)
    }

    @Test func simulatedExpirationGoesThroughTheRealExpiryPath() throws {
        var state = makeState()
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.launchDue(at: t0, firstPID: 321)
        _ = state.takeChanges()

        let result = state.run(.simulateExpiration(identifier: Tasks.cleanup, app: nil), at: at(100))
        #expect(result.outcome.succeeded)
        #expect(result.outcome.identifier == Tasks.cleanup)
        #expect(result.outcome.message == "com.example.news.cleanup expired; pid 321 sent SIGUSR1")
        let expired = try #require(state.task(Tasks.cleanup))
        #expect(expired.deadline == at(100), "the deadline becomes now")
        // Through the real expiry path at once: the signal is among the command's effects.
        #expect(result.effects == [.notifyExpiration(pid: 321, signal: "SIGUSR1", tasks: [state.key(Tasks.cleanup)])])
        #expect(expired.state == .expiring)
        #expect(expired.killDeadline == at(105))
        let changes = state.takeChanges()
        #expect(changes.tasks == [state.key(Tasks.cleanup)])
        #expect(changes.eventTypes == [.expired])
        #expect(state.expire(at: at(100)).isEmpty, "told once")
        #expect(state.nextWake(after: at(100)) == at(105), "the next wake is the kill")

        let again = state.run(.simulateExpiration(identifier: Tasks.cleanup, app: Apps.news), at: at(101))
        #expect(again.errorName == "alreadyExpiring")
        #expect(again.errorMessage == "task with identifier com.example.news.cleanup is already expiring")
        #expect(state.task(Tasks.cleanup)?.killDeadline == at(105), "a refused command changes nothing")

        #expect(state.expire(at: at(105)) == [.kill(pid: 321, processGroup: 321, tasks: [state.key(Tasks.cleanup)])])
        #expect(state.apps[Apps.news]?.throttleLevel == 1, "a simulated overrun is punished like a real one")
    }

    @Test func simulatedExpirationOfNothingRunning() {
        var state = makeState()
        let result = state.run(.simulateExpiration(identifier: Tasks.refresh, app: nil), at: t0)
        #expect(result.errorName == "noSuchTask")
        #expect(result.errorMessage == "no running task with identifier com.example.news.refresh")
        // A pending request is not a running task.
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        #expect(state.run(.simulateExpiration(identifier: Tasks.refresh, app: nil), at: t0).errorName == "noSuchTask")
        // Running for another app only.
        state.launchDue(at: t0)
        #expect(state.run(.simulateExpiration(identifier: Tasks.refresh, app: Apps.mail), at: t0).errorName == "noSuchTask")
        #expect(state.run(.simulateExpiration(identifier: Tasks.refresh, app: Apps.news), at: t0).outcome.succeeded)
    }
}
