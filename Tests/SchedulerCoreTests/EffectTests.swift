import Foundation
import Testing
import SchedulerCore
import TaskState

/// The specification of what the daemon does: the effects each command and each turn return, in
/// order. The daemon carries these out and decides nothing else.
@Suite("Effects of commands and turns")
struct EffectTests {
    @Test func commandsThatOnlyChangeStateHaveNoEffects() {
        var state = makeState()
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(600), at: t0).effects.isEmpty)
        #expect(state.run(.cancel(app: Apps.news, identifier: Tasks.refresh), at: t0).effects.isEmpty)
        #expect(state.run(.setConditions(ConditionOverrides(network: false)), at: t0).effects.isEmpty)
        #expect(state.run(.setAppEnabled(app: Apps.news, enabled: true), at: t0).effects.isEmpty)
    }

    @Test func aRefusedCommandHasNoEffects() {
        var state = makeState()
        let refused = state.run(.simulateLaunch(identifier: Tasks.refresh, app: nil), at: t0)
        #expect(refused.errorName == "noSuchRequest")
        #expect(refused.effects.isEmpty)
    }

    @Test func simulateLaunchReturnsTheLaunch() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(600), at: t0)
        let result = state.run(.simulateLaunch(identifier: Tasks.refresh, app: nil), at: at(1))
        let plan = try #require(result.launch)
        #expect(result.effects == [.launch(plan)])
        #expect(plan.simulated && plan.requests.map(\.identifier) == [Tasks.refresh])
    }

    @Test func simulateExpirationReturnsTheSignalAtOnce() {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 40)
        let result = state.run(.simulateExpiration(identifier: Tasks.refresh, app: nil), at: at(2))
        #expect(result.effects == [.notifyExpiration(pid: 40, signal: "SIGUSR1", tasks: [state.key(Tasks.refresh)])])
    }

    @Test func processesACommandNamesAreHandedToTheRuntimeToSupervise() {
        var state = makeState()
        let finishing = state.run(.beginFinishing(app: Apps.news, name: "save", pid: 77), at: t0)
        #expect(finishing.effects == [.superviseFinishing(TaskKey(app: Apps.news, identifier: ident("finishing-1")), pid: 77)])
        let attached = state.run(.attach(app: Apps.news, pid: 78, identifiers: [Tasks.refresh]), at: t0)
        #expect(attached.effects == [.superviseAttachment(app: Apps.news, pid: 78)])
    }

    @Test func transferCommandsReturnTheAttemptsToStop() {
        var state = makeState()
        state.createTransfer(download("run"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("run")])
        #expect(state.run(.pauseTransfer(app: Apps.news, identifier: ident("run")), at: at(1)).effects
            == [.transfer(.pause(transferKey("run")))])
        state.createTransfer(download("other"), at: at(1))
        #expect(state.run(.setAppEnabled(app: Apps.news, enabled: false), at: at(2)).effects
            == [.transfer(.cancel(transferKey("other"))), .transfer(.cancel(transferKey("run")))])
    }

    @Test func aTurnReturnsExpiriesLaunchesAndTransfersInThatOrder() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.launchDue(at: t0, firstPID: 50)                      // budget 30 s: due at 30
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(30), at: t0)
        state.createTransfer(download("dl", earliest: at(30)), at: t0)
        #expect(state.effectsOfTime(at: at(29)).isEmpty)

        let effects = state.effectsOfTime(at: at(30))
        #expect(effects.count == 3)
        #expect(effects.first == .notifyExpiration(pid: 50, signal: "SIGUSR1", tasks: [state.key(Tasks.refresh)]))
        guard case .launch(let plan) = effects[1] else { Issue.record("\(effects[1])"); return }
        #expect(plan.requests.map(\.identifier) == [Tasks.backup])
        guard case .transfer(.start(let record)) = effects[2] else { Issue.record("\(effects[2])"); return }
        #expect(record.key == transferKey("dl"))

        #expect(state.effectsOfTime(at: at(35), busyTransfers: [transferKey("dl")])
            == [.kill(pid: 50, processGroup: 50, tasks: [state.key(Tasks.refresh)])] + state.dueLaunches(at: at(35)).map(SchedulerEffect.launch))
    }
}
