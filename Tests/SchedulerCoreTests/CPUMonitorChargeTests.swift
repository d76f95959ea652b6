import Foundation
import Testing
import SchedulerCore
import TaskState

/// Whom the CPU monitor charges: the figures are a whole launch's, so a launch is not judged
/// while any task in it is exempt, nor when its tasks run in a process the scheduler did not start.
@Suite("CPU monitor: what a launch is charged for")
struct CPUMonitorChargeTests {
    private func settings() -> SchedulerSettings {
        var settings = SchedulerSettings()
        settings.cpuLimitPercent = 50
        settings.cpuLimitWindowSeconds = 2
        return settings
    }

    /// A whole core for four seconds, one sample a second (the injected clock).
    private func spin(_ state: inout SchedulerState, launch: String, pid: Int32, started: Bool) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        for second in 0...4 {
            let sample = ResourceSample(launchID: launch, app: Apps.news, time: Double(second), cpuSeconds: Double(second),
                                        memoryBytes: 1 << 20, peakMemoryBytes: 1 << 20,
                                        members: [LeftoverEnding.Member(pid: pid, processStartTicks: 1)],
                                        startedByScheduler: started, leader: pid)
            effects += state.applyResourceSamples([sample], now: at(Double(second)))
        }
        return effects
    }

    @Test func aRefreshBesideAProcessingTaskOnExternalPowerIsNotChargedForItsCPU() throws {
        var state = makeState(settings: settings(), probed: Conditions(externalPower: true))
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.launchDue(at: t0, firstPID: 500)
        let refresh = try #require(state.task(Tasks.refresh))
        let processing = try #require(state.task(Tasks.cleanup))
        try #require(refresh.launchID == processing.launchID, "both launched together in one process")
        #expect(spin(&state, launch: refresh.launchID, pid: 500, started: true).isEmpty)
        #expect(state.task(Tasks.refresh)?.state == .running, "the exempt processing task's CPU is not the refresh's")
        #expect(state.task(Tasks.cleanup)?.state == .running)
        #expect(state.apps[Apps.news]?.lastCpuLimitAt == nil)
    }

    @Test func onBatteryTheSameLaunchIsJudged() throws {
        var state = makeState(settings: settings(), probed: Conditions(externalPower: false))
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        state.launchDue(at: t0, firstPID: 500)
        let refresh = try #require(state.task(Tasks.refresh))
        #expect(!spin(&state, launch: refresh.launchID, pid: 500, started: true).isEmpty)
        #expect(state.task(Tasks.refresh)?.state == .expiring)
        #expect(state.task(Tasks.cleanup)?.state == .expiring)
    }

    @Test func aRefreshHandedToAPersonsAttachedProcessIsNotChargedForTheirCPU() throws {
        var state = makeState(settings: settings())
        // pid 900 is a person's: the scheduler never started it.
        state.run(.attach(app: Apps.news, pid: 900, identifiers: [Tasks.refresh]), at: t0)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let plans = state.launchDue(at: t0, firstPID: 900)
        try #require(plans.first?.handOver?.pid == 900, "the refresh is handed over")
        let task = try #require(state.task(Tasks.refresh))
        #expect(spin(&state, launch: task.launchID, pid: 900, started: false).isEmpty)
        #expect(state.task(Tasks.refresh)?.state == .running)
    }

    @Test func aRefreshHandedToAnAttachedProcessTheSchedulerStartedIsJudged() throws {
        var state = makeState(settings: settings())
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 500)
        state.run(.attach(app: Apps.news, pid: 500, identifiers: [Tasks.refresh2]), at: t0)
        state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: t0)
        state.submitRequest(Tasks.refresh2, kind: .appRefresh, at: t0)
        let plans = state.launchDue(at: t0, firstPID: 500)
        try #require(plans.first?.handOver?.pid == 500)
        let task = try #require(state.task(Tasks.refresh2))
        // The runtime marks the hand-over's launch as not started by the scheduler (its ledger
        // entry is the first launch's); the process is the scheduler's all the same.
        #expect(!spin(&state, launch: task.launchID, pid: 500, started: false).isEmpty)
        #expect(state.task(Tasks.refresh2)?.state == .expiring)
    }
}
