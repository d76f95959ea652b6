import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("CPU monitor: the window, the limits, and leftovers")
struct CPUMonitorTests {
    // MARK: - The window

    @Test func theAverageIsOverTheWholeWindowOnly() {
        var window = CPUWindow(windowSeconds: 10)
        window.add(.init(time: 100, cpuSeconds: 0))
        window.add(.init(time: 105, cpuSeconds: 5))
        #expect(window.averagePercent == nil, "five seconds do not fill a ten-second window")
        #expect(window.latestPercent == 100)
        window.add(.init(time: 110, cpuSeconds: 7))
        #expect(window.averagePercent == 70)
        // Older samples slide out: 110…120 used 1 s of CPU.
        window.add(.init(time: 115, cpuSeconds: 7.5))
        window.add(.init(time: 120, cpuSeconds: 8))
        #expect(window.averagePercent == 10)
        #expect(window.samples.first?.time == 110)
    }

    @Test func aClockThatGoesBackStartsTheWindowAgainInsteadOfInventingUse() {
        var window = CPUWindow(windowSeconds: 10)
        window.add(.init(time: 1000, cpuSeconds: 1))
        window.add(.init(time: 1010, cpuSeconds: 2))
        #expect(window.averagePercent == 10)
        // Time that runs backwards (a sample from a clock that was set back) is no measurement
        // of the same interval: the window restarts from it.
        window.add(.init(time: 400, cpuSeconds: 3))
        #expect(window.samples == [.init(time: 400, cpuSeconds: 3)])
        #expect(window.averagePercent == nil)
        // Figures that shrink (a reset counter) restart it too; never a negative percentage.
        window.add(.init(time: 405, cpuSeconds: 0.5))
        #expect(window.samples.count == 1)
        window.add(.init(time: 415, cpuSeconds: 1.5))
        #expect(window.averagePercent == 10)
    }

    @Test func aWallClockJumpDoesNotMoveTheMonitor() throws {
        // The daemon passes monotonic time: the wall clock (now) jumps an hour back between two
        // samples, the monotonic one moves one second, and the judgement follows the latter.
        var settings = SchedulerSettings()
        settings.cpuLimitPercent = 50
        settings.cpuLimitWindowSeconds = 2
        var state = runningRefresh(settings: settings)
        let launch = try #require(state.task(Tasks.refresh)).launchID
        #expect(state.applyResourceSamples([sample(launch, time: 10, cpu: 0)], now: at(1)).isEmpty)
        #expect(state.applyResourceSamples([sample(launch, time: 11, cpu: 0.2)], now: at(-3600)).isEmpty)
        #expect(state.applyResourceSamples([sample(launch, time: 12, cpu: 0.4)], now: at(3)).isEmpty,
                "20% of a core is under the limit whatever the wall clock did")
        #expect(state.task(Tasks.refresh)?.state == .running)
    }

    // MARK: - Limits

    @Test func aRefreshOverTheLimitIsExpiredThroughTheNormalPathWithItsFigures() throws {
        var settings = SchedulerSettings()
        settings.cpuLimitPercent = 80
        settings.cpuLimitWindowSeconds = 5
        var state = runningRefresh(settings: settings)
        let task = try #require(state.task(Tasks.refresh))
        for second in 0..<5 {
            #expect(state.applyResourceSamples([sample(task.launchID, time: Double(second), cpu: Double(second) * 0.95)],
                                                now: at(Double(second))).isEmpty)
        }
        _ = state.takeChanges()
        let effects = state.applyResourceSamples([sample(task.launchID, time: 5, cpu: 4.75, peak: 9 << 20)], now: at(5))
        #expect(effects == [.notifyExpiration(pid: 500, signal: "SIGUSR1", tasks: [task.key])])
        let expiring = try #require(state.task(Tasks.refresh))
        #expect(expiring.state == .expiring)
        #expect(expiring.killDeadline == at(10), "the normal grace follows")
        let changes = state.takeChanges()
        let event = try #require(changes.events.first { $0.type == .expired })
        #expect(event.reason == "cpuLimit")
        #expect(event.cpuSeconds == 4.75)
        #expect(event.peakMemoryBytes == 9 << 20)
        #expect(event.message.contains("95% of a core over 5 s"))
        let record = try #require(state.apps[Apps.news])
        #expect(record.lastCpuLimitAt == at(5))
        #expect(record.lastCpuLimitReason?.hasPrefix("cpuLimit") == true)
        // Not completed within the grace: killed and throttled like any overrun.
        let kill = state.expire(at: at(10))
        #expect(kill == [.kill(pid: 500, processGroup: 500, tasks: [task.key])])
        let killed = try #require(state.takeChanges().events.first { $0.type == .killed })
        #expect(killed.cpuSeconds == 4.75)
        #expect(state.apps[Apps.news]?.throttleLevel == 1)
    }

    @Test func underTheLimitNothingHappensAndTheLimitCanBeSwitchedOff() throws {
        var settings = SchedulerSettings()
        settings.cpuLimitWindowSeconds = 2
        settings.cpuLimitPercent = 0
        var state = runningRefresh(settings: settings)
        let launch = try #require(state.task(Tasks.refresh)).launchID
        for second in 0...4 {
            #expect(state.applyResourceSamples([sample(launch, time: Double(second), cpu: Double(second))], now: at(Double(second))).isEmpty)
        }
        #expect(state.task(Tasks.refresh)?.state == .running, "0 turns the monitor off")
    }

    @Test func processingOnExternalPowerIsExemptAndOnBatteryIsNot() throws {
        var settings = SchedulerSettings()
        settings.cpuLimitWindowSeconds = 2
        for power in [true, false] {
            var state = makeState(settings: settings, probed: Conditions(externalPower: power))
            state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
            state.launchDue(at: t0, firstPID: 700)
            let launch = try #require(state.task(Tasks.cleanup)).launchID
            var effects: [SchedulerEffect] = []
            for second in 0...3 {
                effects += state.applyResourceSamples([sample(launch, time: Double(second), cpu: Double(second))], now: at(Double(second)))
            }
            if power {
                #expect(effects.isEmpty)
                #expect(state.task(Tasks.cleanup)?.state == .running)
            } else {
                #expect(effects.count == 1)
                #expect(state.task(Tasks.cleanup)?.state == .expiring)
            }
        }
    }

    @Test func theMemoryLimitExpiresWithItsOwnReason() throws {
        var settings = SchedulerSettings()
        settings.memoryLimitMiB = 64
        var state = runningRefresh(settings: settings)
        let launch = try #require(state.task(Tasks.refresh)).launchID
        #expect(state.applyResourceSamples([sample(launch, time: 0, cpu: 0, memory: 64 << 20)], now: at(0)).isEmpty, "at the limit is allowed")
        _ = state.takeChanges()
        #expect(state.applyResourceSamples([sample(launch, time: 1, cpu: 0, memory: 65 << 20)], now: at(1)).count == 1)
        let event = try #require(state.takeChanges().events.first { $0.type == .expired })
        #expect(event.reason == "memoryLimit")
        #expect(state.apps[Apps.news]?.lastCpuLimitReason?.hasPrefix("memoryLimit") == true)
    }

    @Test func completedEventsCarryTheLastFigures() throws {
        var state = runningRefresh(settings: SchedulerSettings())
        let launch = try #require(state.task(Tasks.refresh)).launchID
        _ = state.applyResourceSamples([sample(launch, time: 0, cpu: 1.5, memory: 3 << 20)], now: at(1))
        _ = state.takeChanges()
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(2))
        let event = try #require(state.takeChanges().events.first { $0.type == .completed })
        #expect(event.cpuSeconds == 1.5)
        #expect(event.peakMemoryBytes == 3 << 20)
    }

    // MARK: - Leftovers

    @Test func leftoversOfAFinishedLaunchAreEndedAndKilledAfterTheGrace() throws {
        var state = runningRefresh(settings: SchedulerSettings())
        let task = try #require(state.task(Tasks.refresh))
        let children = [LeftoverEnding.Member(pid: 501, processStartTicks: 7), LeftoverEnding.Member(pid: 502, processStartTicks: 8)]
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(1))
        state.processExited(pid: 500, status: "exited with status 0", now: at(1))
        _ = state.takeChanges()
        let term = state.applyResourceSamples([sample(task.launchID, time: 1, cpu: 0, members: children, leader: nil)], now: at(1))
        #expect(term == [.endLeftover(launchID: task.launchID, members: children, signal: "SIGTERM")])
        let changes = state.takeChanges()
        #expect(changes.processes, "the decision is committed with the ledger")
        let event = try #require(changes.events.first)
        #expect(event.type == .leftoverEnded)
        #expect(event.message.contains("pids 501, 502"))
        #expect(state.accounting.endings[task.launchID]?.killAt == at(6))
        #expect(state.applyResourceSamples([sample(task.launchID, time: 2, cpu: 0, members: children, leader: nil)], now: at(2)).isEmpty)
        let kill = state.applyResourceSamples([sample(task.launchID, time: 6, cpu: 0, members: [children[1]], leader: nil)], now: at(6))
        #expect(kill == [.endLeftover(launchID: task.launchID, members: [children[1]], signal: "SIGKILL")])
        // Gone: forgotten, and the ledger no longer names it.
        _ = state.takeChanges()
        #expect(state.applyResourceSamples([sample(task.launchID, time: 7, cpu: 0, members: [], leader: nil)], now: at(7)).isEmpty)
        #expect(state.accounting.endings.isEmpty)
        #expect(state.takeChanges().processes)
    }

    @Test func aLeaderStillRunningGetsTheGraceToExitAndAnAttachedOneIsLeftAlone() throws {
        var state = runningRefresh(settings: SchedulerSettings())
        let task = try #require(state.task(Tasks.refresh))
        let leader = LeftoverEnding.Member(pid: 500, processStartTicks: 1)
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(1))
        #expect(state.applyResourceSamples([sample(task.launchID, time: 1, cpu: 0, members: [leader], leader: 500)], now: at(1)).isEmpty)
        #expect(state.applyResourceSamples([sample(task.launchID, time: 5, cpu: 0, members: [leader], leader: 500)], now: at(5.9)).isEmpty)
        #expect(state.applyResourceSamples([sample(task.launchID, time: 6, cpu: 0, members: [leader], leader: 500)], now: at(6)).count == 1)

        var attached = runningRefresh(settings: SchedulerSettings())
        let other = try #require(attached.task(Tasks.refresh))
        attached.run(.attach(app: Apps.news, pid: 500, identifiers: [Tasks.refresh]), at: at(0.5))
        attached.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(1))
        #expect(attached.applyResourceSamples([sample(other.launchID, time: 9, cpu: 0, members: [leader], leader: 500)], now: at(60)).isEmpty,
                "the attached process waits for its next task")
    }

    @Test func aProcessThatStillCarriesATaskIsNotLeftover() throws {
        var state = runningRefresh(settings: SchedulerSettings())
        let task = try #require(state.task(Tasks.refresh))
        let leader = LeftoverEnding.Member(pid: 500, processStartTicks: 1)
        // The launched process begins a finishing task (as an app going away does), then its
        // refresh completes: its own launch has no task left, but the process has one.
        state.run(.beginFinishing(app: Apps.news, name: "save", pid: 500), at: at(1))
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(2))
        #expect(state.tasks.values.contains { $0.pid == 500 && $0.kind == .finishing })
        #expect(state.applyResourceSamples([sample(task.launchID, time: 60, cpu: 0, members: [leader], leader: 500)], now: at(60)).isEmpty)
        #expect(state.accounting.endings.isEmpty)
    }

    @Test func aProcessTheSchedulerDidNotStartIsNeverEnded() throws {
        var state = runningRefresh(settings: SchedulerSettings())
        let person = LeftoverEnding.Member(pid: 900, processStartTicks: 3)
        #expect(state.applyResourceSamples([sample("finishing-launch", time: 0, cpu: 0, members: [person], leader: 900, started: false)],
                                           now: at(60)).isEmpty)
        #expect(state.accounting.endings.isEmpty)
    }

    @Test func anEndingLeftAtARestartIsKilledByTheNextScheduler() throws {
        var state = runningRefresh(settings: SchedulerSettings())
        let task = try #require(state.task(Tasks.refresh))
        let child = LeftoverEnding.Member(pid: 501, processStartTicks: 7)
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: at(1))
        _ = state.applyResourceSamples([sample(task.launchID, time: 1, cpu: 0, members: [child], leader: nil)], now: at(1))
        let ledger = ProcessLedger(processes: Array(state.processes.values), endings: Array(state.accounting.endings.values))
        var snapshot = StateSnapshot()
        snapshot.processes = ledger
        var next = SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(), snapshot: snapshot,
                                  conditions: ConditionsRecord(probed: Conditions(), probedAt: at(2)))
        #expect(next.resumeLeftoverEndings(now: at(2)) == [.endLeftover(launchID: task.launchID, members: [child], signal: "SIGKILL")])
        #expect(next.takeChanges().events.map(\.type) == [.leftoverEnded])
    }

    // MARK: - Helpers

    private func runningRefresh(settings: SchedulerSettings) -> SchedulerState {
        var state = makeState(settings: settings)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 500)
        _ = state.takeChanges()
        return state
    }

    private func sample(_ launchID: String, time: Double, cpu: Double, memory: Int64 = 1 << 20, peak: Int64 = 0,
                        members: [LeftoverEnding.Member] = [LeftoverEnding.Member(pid: 500, processStartTicks: 1)],
                        leader: Int32? = 500, started: Bool = true) -> ResourceSample {
        ResourceSample(launchID: launchID, app: Apps.news, time: time, cpuSeconds: cpu, memoryBytes: memory,
                       peakMemoryBytes: max(peak, memory), members: members, startedByScheduler: started, leader: leader)
    }
}
