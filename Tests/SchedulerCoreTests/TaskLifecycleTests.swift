import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Completion, finishing tasks, exits and adoption")
struct TaskLifecycleTests {
    @Test(arguments: [true, false])
    func completeEndsARunningTask(success: Bool) throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 42)
        _ = state.takeChanges()

        let result = state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: success), at: at(12.5), id: "done-1")
        #expect(result.outcome.succeeded)
        #expect(result.outcome.message == "completed com.example.news.refresh \(success ? "successfully" : "with failure")")
        #expect(result.outcome.identifier == Tasks.refresh)
        #expect(state.tasks.isEmpty)
        let changes = state.takeChanges()
        #expect(changes.tasks == [state.key(Tasks.refresh)])
        #expect(changes.apps.isEmpty, "nothing to reset on an unthrottled app")
        let event = try #require(changes.events.first)
        #expect(changes.eventTypes == [.completed])
        #expect(event.reason == (success ? "success" : "failure"))
        #expect(event.pid == 42 && event.command == "done-1")
        #expect(event.message.hasSuffix("after 12.5 s"), "\(event.message)")
        #expect(state.expire(at: at(100)).isEmpty, "no expiry for a completed task")
        #expect(state.nextWake(after: at(13)) == nil)
    }

    @Test func completingSomethingNotRunningIsRefused() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let result = state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(1))
        #expect(result.errorName == "noSuchTask")
        #expect(result.errorMessage == "no running task with identifier com.example.news.refresh for com.example.news")
        #expect(state.request(Tasks.refresh) != nil, "a pending request is left alone")

        // After the kill there is nothing left to complete.
        state.launchDue(at: at(1))
        _ = state.expire(at: at(31))
        _ = state.expire(at: at(36))
        #expect(state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(37)).errorName == "noSuchTask")
    }

    @Test func beginFinishingStartsNumberedTasksWithTheFinishingBudget() throws {
        var state = makeState()
        let first = state.run(.beginFinishing(app: Apps.news, name: "send message", pid: 3131), at: t0, id: "fin-1")
        #expect(first.outcome.succeeded)
        #expect(first.outcome.identifier == ident("finishing-1"))
        #expect(first.outcome.message == "finishing task finishing-1 started with 30 s")
        let task = try #require(state.task(ident("finishing-1")))
        #expect(task.kind == .finishing && task.state == .running)
        #expect(task.pid == 3131 && task.processGroup == nil)
        #expect(task.deadline == at(30))
        #expect(task.name == "send message")
        #expect(task.launchID == "fin-1")
        #expect(task.launchReason == "finishing")
        #expect(state.takeChanges().eventTypes == [.launched])

        let second = state.run(.beginFinishing(app: Apps.news, name: nil, pid: 3131), at: at(1))
        #expect(second.outcome.identifier == ident("finishing-2"))
        state.run(.complete(app: Apps.news, identifier: ident("finishing-1"), success: true), at: at(2))
        let third = state.run(.beginFinishing(app: Apps.news, name: nil, pid: 3131), at: at(3))
        #expect(third.outcome.identifier == ident("finishing-1"), "a free number is reused")

        // Expiry of a finishing task kills the process itself (no process group).
        #expect(state.expire(at: at(31)) == [.notifyExpiration(pid: 3131, signal: "SIGUSR1", tasks: [state.key(ident("finishing-2"))])])
        #expect(state.expire(at: at(33)) == [.notifyExpiration(pid: 3131, signal: "SIGUSR1", tasks: [state.key(ident("finishing-1"))])])
        let kill = state.expire(at: at(36))
        #expect(kill == [.kill(pid: 3131, processGroup: nil,
                               tasks: [state.key(ident("finishing-1")), state.key(ident("finishing-2"))])])
    }

    @Test func beginFinishingNeedsAManifestAndAPid() {
        var settings = SchedulerSettings()
        settings.finishingBudgetSeconds = 7.5
        var state = makeState(settings: settings)
        #expect(state.run(.beginFinishing(app: Apps.ghost, name: nil, pid: 10), at: t0).errorName == "unknownApp")
        #expect(state.run(.beginFinishing(app: Apps.news, name: nil, pid: 0), at: t0).errorName == "invalidCommand")
        #expect(state.tasks.isEmpty)
        #expect(state.run(.beginFinishing(app: Apps.news, name: nil, pid: 10), at: t0).outcome.succeeded)
        #expect(state.task(ident("finishing-1"))?.deadline == at(7.5))
    }

    @Test func aProcessExitEndsItsTasksOnly() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.submitRequest(ident("com.example.mail.refresh"), app: Apps.mail, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 10) // mail gets 10, news 11
        #expect(state.watchedPIDs == [10, 11])
        _ = state.takeChanges()

        state.processExited(pid: 11, status: "exited with status 3", now: at(5))
        #expect(state.tasks.keys.map(\.app) == [Apps.mail])
        #expect(state.watchedPIDs == [10])
        let changes = state.takeChanges()
        #expect(changes.tasks == [state.key(Tasks.refresh), state.key(Tasks.cleanup)])
        #expect(changes.eventTypes == [.exited, .exited])
        #expect(changes.events.allSatisfy { $0.reason == "exited with status 3" && $0.pid == 11 })
        #expect(changes.events.first?.message == "com.example.news: pid 11 exited with status 3 without completing com.example.news.cleanup")

        state.processExited(pid: 999, status: "killed by SIGKILL", now: at(6))
        #expect(state.takeChanges().isEmpty, "an unknown pid changes nothing")
        #expect(state.expire(at: at(100)).count == 1, "only mail's task is left to expire")
    }

    @Test func adoptionKeepsLiveTasksAndDropsDeadOnes() throws {
        let alive = LaunchedTask(app: Apps.news, identifier: Tasks.cleanup, kind: .processing, launchReason: "processing",
                                 simulated: false, pid: 50, processGroup: 50, processStartTicks: 7, launchID: "l1",
                                 startedAt: t0, deadline: at(600))
        var dead = alive
        dead.identifier = Tasks.refresh
        dead.kind = .appRefresh
        dead.pid = 51
        dead.deadline = at(30)
        var snapshot = StateSnapshot()
        snapshot.tasks = [alive, dead]
        snapshot.apps = [AppRecord(id: Apps.news, throttleLevel: 1, throttledUntil: at(60))]
        snapshot.requests = [PendingRequest(app: Apps.news, identifier: Tasks.backup, kind: .processing, submittedAt: t0)]
        snapshot.conditions = ConditionsRecord(probed: Conditions(), overrides: ConditionOverrides(network: false), probedAt: t0)

        var state = SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(), snapshot: snapshot,
                                   conditions: ConditionsRecord(probed: Conditions(idle: false), probedAt: at(10)))
        #expect(state.tasks.count == 2 && state.requests.count == 1)
        #expect(state.apps[Apps.news]?.throttleLevel == 1)
        #expect(state.conditions.effective == Conditions(network: false, idle: false),
                "stored overrides apply on top of the fresh probe")
        #expect(state.conditions.isSimulated(.network))

        let gone = state.adoptTasks(now: at(10)) { $0.pid == 50 }
        #expect(gone == [51])
        #expect(state.tasks.count == 2, "a gone process's task waits until the inbox is applied")
        state.interruptTasks(ofGone: gone, now: at(10))
        #expect(state.tasks.keys.map(\.identifier) == [Tasks.cleanup])
        let changes = state.takeChanges()
        #expect(changes.tasks == [state.key(Tasks.refresh)], "only the dropped task's file changes")
        #expect(Set(changes.eventTypes) == [.adopted, .interrupted])
        #expect(changes.events.first { $0.type == .interrupted }?.pid == 51)
        #expect(state.nextWake(after: at(10)) == at(600), "the adopted task keeps its deadline")
    }

    @Test func enablingAndDisablingApps() {
        var state = makeState()
        let off = state.run(.setAppEnabled(app: Apps.news, enabled: false), at: t0)
        #expect(off.outcome.message == "com.example.news disabled")
        var changes = state.takeChanges()
        #expect(changes.apps == [Apps.news])
        #expect(changes.eventTypes == [.appDisabled])

        let again = state.run(.setAppEnabled(app: Apps.news, enabled: false), at: at(1))
        #expect(again.outcome.message == "com.example.news was already disabled")
        #expect(state.takeChanges().isEmpty)

        state.run(.setAppEnabled(app: Apps.news, enabled: true), at: at(2))
        changes = state.takeChanges()
        #expect(changes.eventTypes == [.appEnabled])
        #expect(state.apps[Apps.news]?.enabled == true)
        #expect(state.run(.setAppEnabled(app: Apps.ghost, enabled: true), at: at(3)).errorName == "unknownApp")
    }

    @Test func catalogUpdatesAreReportedOnce() {
        var state = SchedulerState(conditions: ConditionsRecord(probed: Conditions(), probedAt: t0))
        var catalog = makeCatalog()
        catalog.problems = [ManifestProblem(file: "bad.json", reason: "not valid JSON")]
        state.updateCatalog(catalog, now: t0)
        var changes = state.takeChanges()
        #expect(changes.eventTypes.filter { $0 == .manifestLoaded }.count == 5)
        #expect(changes.eventTypes.filter { $0 == .manifestError }.count == 1)
        #expect(changes.apps.count == 5)
        #expect(state.catalog == catalog)

        state.updateCatalog(catalog, now: at(1))
        #expect(state.takeChanges().isEmpty, "the same catalog again is not news")

        var edited = catalog
        edited.manifests[Apps.news]?.expirationSignal = "SIGTERM"
        state.updateCatalog(edited, now: at(2))
        changes = state.takeChanges()
        #expect(changes.eventTypes == [.manifestLoaded])
        #expect(changes.events.first?.app == Apps.news)
    }

    @Test func conditionOverridesMergeAndClear() {
        var state = makeState()
        state.run(.setConditions(ConditionOverrides(network: false)), at: t0)
        state.run(.setConditions(ConditionOverrides(externalPower: false)), at: at(1))
        #expect(state.conditions.overrides == ConditionOverrides(externalPower: false, network: false))
        #expect(state.conditions.effective == Conditions(externalPower: false, network: false))
        var changes = state.takeChanges()
        #expect(changes.conditions)
        #expect(changes.eventTypes == [.conditionsChanged, .conditionsChanged])

        state.run(.setConditions(ConditionOverrides(externalPower: false)), at: at(2))
        #expect(state.takeChanges().isEmpty, "an override that changes nothing is not recorded")

        // Probes under an override keep the override.
        state.updateProbedConditions(Conditions(network: true), batteryPercent: nil, loadAverage: 0.5, now: at(3))
        #expect(state.conditions.effective.network == false)

        state.run(.clearConditions, at: at(4))
        #expect(state.conditions.overrides.isEmpty)
        #expect(state.conditions.effective == Conditions())
        changes = state.takeChanges()
        #expect(changes.eventTypes == [.conditionsChanged])
    }

    @Test func aProbeThatOnlyMovesTheLoadIsNotAChange() {
        var state = makeState()
        state.updateProbedConditions(Conditions(), batteryPercent: nil, loadAverage: 0.3, now: at(30))
        state.updateProbedConditions(Conditions(), batteryPercent: nil, loadAverage: 0.4, now: at(60))
        #expect(state.takeChanges().isEmpty)
        state.updateProbedConditions(Conditions(), batteryPercent: 55, loadAverage: 0.4, now: at(90))
        let changes = state.takeChanges()
        #expect(changes.conditions, "a new battery figure is written")
        #expect(changes.events.isEmpty, "but the effective conditions did not change")
    }
}
