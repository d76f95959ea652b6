import Foundation
import Testing
import SchedulerCore
import TaskState

/// The process ledger (`processes.json`) and what a restarted scheduler does with it.
@Suite("Process ledger and supervision across restarts")
struct ProcessSupervisionTests {
    /// `news` refresh launched at t0 with pid 500 (group 500, start ticks 1); budget 30 s, grace 5 s.
    private func running() -> SchedulerState {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 500)
        return state
    }

    /// The state a restarted scheduler builds from what `state` would have committed.
    private func restarted(_ state: SchedulerState) -> SchedulerState {
        var snapshot = StateSnapshot()
        snapshot.tasks = Array(state.tasks.values)
        snapshot.processes = ProcessLedger(processes: Array(state.processes.values))
        return SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(), snapshot: snapshot,
                              conditions: ConditionsRecord(probed: Conditions(), probedAt: t0))
    }

    @Test func aLaunchIsLedgeredInItsOwnCommitAndForgottenWhenItsProcessExits() throws {
        var state = running()
        let entry = try #require(state.processes[500])
        #expect(entry.processGroup == 500 && entry.processStartTicks == 1 && entry.app == Apps.news && entry.killDecidedAt == nil)
        #expect(state.takeChanges().processes, "written with the launch's tasks")
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(3))
        #expect(state.processes[500] != nil, "a process outlives its tasks until it exits")
        state.processExited(pid: 500, status: "exited with status 0", now: at(4))
        #expect(state.processes.isEmpty)
        #expect(state.takeChanges().processes)
    }

    @Test func aKillIsLedgeredInTheCommitThatDecidesIt() throws {
        var state = running()
        _ = state.expire(at: at(30))
        _ = state.takeChanges()
        let kill = state.expire(at: at(35))
        #expect(kill == [.kill(pid: 500, processGroup: 500, tasks: [state.key(Tasks.refresh)])])
        #expect(state.tasks.isEmpty)
        #expect(state.processes[500]?.killDecidedAt == at(35), "the kill is on disk before it is sent")
        #expect(state.takeChanges().processes)
    }

    @Test func aRestartKillsWhatWasDecidedAndForgetsWhatIsGone() throws {
        var state = running()
        state.submitRequest(Tasks.backup, kind: .processing, at: t0)
        state.run(.simulateLaunch(identifier: Tasks.backup, app: Apps.news), at: at(1))
        let plan = try #require(state.dueLaunches(at: at(1)).first ?? nil)
        state.recordLaunch(plan, pid: 600, processGroup: 600, processStartTicks: 9, now: at(1))
        _ = state.expire(at: at(30))
        _ = state.expire(at: at(35)) // decides the kill of 500; the crash comes before it is sent
        var next = restarted(state)
        let actions = next.takeOverProcesses(found: [], now: at(40)) { $0.pid == 500 }
        #expect(actions == [.kill(pid: 500, processGroup: 500, tasks: [])])
        #expect(next.processes.keys.sorted() == [500], "600 is gone; 500 stays until its exit is seen")
        let changes = next.takeChanges()
        #expect(changes.events.map(\.reason) == ["killAfterRestart"])
        #expect(changes.processes)
    }

    @Test func aMarkedProcessOfNoKnownLaunchIsEndedAndOneOfAKnownLaunchIsLeftAlone() throws {
        // 701 is a child of the recorded launch (its leader may even be gone); 700 and 702 belong
        // to launches nothing recorded.
        var state = restarted(running())
        let launchID = try #require(state.tasks.values.first?.launchID)
        let found = [
            MarkedProcess(pid: 700, processStartTicks: 3, launchID: "com.example.news-1", app: Apps.news, leadsGroup: true),
            MarkedProcess(pid: 701, processStartTicks: 4, launchID: launchID, app: Apps.news, leadsGroup: false),
            MarkedProcess(pid: 702, processStartTicks: 5, launchID: "x", app: nil, leadsGroup: false),
        ]
        let actions = state.takeOverProcesses(found: found, now: at(5)) { _ in true }
        #expect(actions == [.kill(pid: 700, processGroup: 700, tasks: []), .kill(pid: 702, processGroup: nil, tasks: [])])
        #expect(state.processes[700]?.killDecidedAt == at(5), "the kill is recorded before it is sent")
        #expect(state.processes[702]?.app.rawValue == "unknown")
        #expect(state.processes[701] == nil, "a child of a supervised launch is part of it")
        #expect(state.takeChanges().events.map(\.reason) == ["unsupervised", "unsupervised"])
    }

    @Test func tasksOfAGoneProcessWaitForTheInboxSoAQueuedCompletionCounts() throws {
        var state = restarted(running())
        let gone = state.adoptTasks(now: at(10)) { _ in false }
        #expect(gone == [500])
        let result = state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(10))
        #expect(result.outcome.succeeded)
        state.interruptTasks(ofGone: gone, now: at(10))
        let changes = state.takeChanges()
        #expect(changes.eventTypes.contains(.completed) && !changes.eventTypes.contains(.interrupted))
        #expect(state.processes.isEmpty)
    }

    @Test func aMarkedProcessThatStartedBeforeTheLastCommitIsLeftAlone() throws {
        // A child of a recorded launch whose leader exited: its launch is gone from the ledger,
        // but it started before the last commit, which would have recorded any launch of its time.
        var state = restarted(running())
        let found = [
            MarkedProcess(pid: 800, processStartTicks: 3, launchID: "com.example.news-old", app: Apps.news,
                          leadsGroup: false, startedAt: at(100)),
            MarkedProcess(pid: 801, processStartTicks: 4, launchID: "com.example.news-new", app: Apps.news,
                          leadsGroup: true, startedAt: at(199.5)),
        ]
        let actions = state.takeOverProcesses(found: found, now: at(300), lastCommitAt: at(200)) { _ in true }
        #expect(actions == [.kill(pid: 801, processGroup: 801, tasks: [])], "only one that started after the last commit")
    }
}
