import Foundation
import Testing
import SchedulerCore
import TaskState

/// The rule for commands that carry a verified launch token: they act on the launch's own app
/// only (issue 11, item 11). The token's MAC is checked at the runtime edge; here it is taken as
/// verified for `Apps.news`.
@Suite("Launch scope")
struct LaunchScopeTests {
    private func command(_ action: CommandAction) -> Command {
        Command(issuedAt: t0, issuerPID: 1, action: action)
    }

    private func refusal(_ action: CommandAction, in state: SchedulerState, launchedFor app: Identifier = Apps.news) -> SchedulerError? {
        state.launchScopeRefusal(of: command(action), launchedFor: app)
    }

    @Test func commandsOnTheLaunchsOwnAppArePermitted() {
        let state = makeState()
        let own: [CommandAction] = [
            .submit(SubmitRequest(app: Apps.news, identifier: Tasks.refresh, kind: .appRefresh)),
            .cancel(app: Apps.news, identifier: Tasks.refresh),
            .cancelAll(app: Apps.news),
            .complete(app: Apps.news, identifier: Tasks.refresh, success: true),
            .beginFinishing(app: Apps.news, name: nil, pid: 42),
            .setAppEnabled(app: Apps.news, enabled: false),
            .attach(app: Apps.news, pid: 42, identifiers: [Tasks.refresh]),
            .detach(app: Apps.news, pid: 42),
            .simulateLaunch(identifier: Tasks.refresh, app: Apps.news),
            .simulateExpiration(identifier: Tasks.refresh, app: Apps.news),
            .cancelTransfer(app: Apps.news, identifier: Tasks.refresh),
            .pauseTransfer(app: Apps.news, identifier: Tasks.refresh),
            .resumeTransfer(app: Apps.news, identifier: Tasks.refresh),
            .acknowledgeTransfer(app: Apps.news, identifier: Tasks.refresh),
            .createTransfer(TransferRequest(app: Apps.news, identifier: Tasks.refresh, direction: .download,
                                            url: "http://127.0.0.1:1/x")),
        ]
        for action in own {
            #expect(refusal(action, in: state) == nil, "\(action)")
        }
    }

    @Test func everyCommandNamingAnotherAppIsRefusedWithBothNames() {
        let state = makeState()
        let other: [CommandAction] = [
            .submit(SubmitRequest(app: Apps.mail, identifier: Tasks.shared, kind: .appRefresh)),
            .cancel(app: Apps.mail, identifier: Tasks.shared),
            .cancelAll(app: Apps.mail),
            .complete(app: Apps.mail, identifier: Tasks.shared, success: true),
            .beginFinishing(app: Apps.mail, name: nil, pid: 42),
            .setAppEnabled(app: Apps.mail, enabled: false),
            .attach(app: Apps.mail, pid: 42, identifiers: [Tasks.shared]),
            .detach(app: Apps.mail, pid: 42),
            .simulateLaunch(identifier: Tasks.shared, app: Apps.mail),
            .simulateExpiration(identifier: Tasks.shared, app: Apps.mail),
            .cancelTransfer(app: Apps.mail, identifier: Tasks.shared),
            .pauseTransfer(app: Apps.mail, identifier: Tasks.shared),
            .resumeTransfer(app: Apps.mail, identifier: Tasks.shared),
            .acknowledgeTransfer(app: Apps.mail, identifier: Tasks.shared),
            .createTransfer(TransferRequest(app: Apps.mail, identifier: Tasks.shared, direction: .download,
                                            url: "http://127.0.0.1:1/x")),
        ]
        #expect(other.count == CommandAction.Name.allCases.count - 2, "every type but the two conditions commands")
        for action in other {
            let error = refusal(action, in: state)
            #expect(error?.name == "notPermitted", "\(action)")
            #expect(error?.message == "a \(action.name.rawValue) from a launch of com.example.news may not act on com.example.mail; it carries com.example.news's launch token (BGTASK_LAUNCH_TOKEN)")
        }
    }

    @Test func theConditionsApplyToEveryAppAndAreRefused() {
        let state = makeState()
        for action: CommandAction in [.setConditions(ConditionOverrides(lowPower: true)), .clearConditions] {
            let error = refusal(action, in: state)
            #expect(error?.name == "notPermitted")
            #expect(error?.message.hasPrefix("a \(action.name.rawValue) from a launch of com.example.news may not change the conditions, which apply to every app") == true,
                    "\(String(describing: error))")
        }
    }

    @Test func aSimulateLaunchWithoutAppIsJudgedByTheAppItResolvesTo() {
        var state = makeState()
        let unnamed = CommandAction.simulateLaunch(identifier: Tasks.shared, app: nil)
        #expect(refusal(unnamed, in: state) == nil, "nothing pending: the policy says noSuchRequest")

        state.submitRequest(Tasks.shared, app: Apps.mail, kind: .appRefresh, at: t0)
        let error = refusal(unnamed, in: state)
        #expect(error?.name == "notPermitted")
        #expect(error?.message.contains("may not act on com.example.mail") == true, "\(String(describing: error))")
        #expect(refusal(unnamed, in: state, launchedFor: Apps.mail) == nil)

        // Pending for both: the launch's own app is among them, and the policy says it is ambiguous.
        state.submitRequest(Tasks.shared, app: Apps.news, kind: .appRefresh, at: t0)
        #expect(refusal(unnamed, in: state) == nil)
        #expect(state.run(unnamed, at: at(1)).errorName == "ambiguous")
    }

    @Test func aSimulateExpirationWithoutAppIsJudgedByTheRunningTask() {
        var state = makeState()
        state.submitRequest(Tasks.shared, app: Apps.mail, kind: .appRefresh, at: t0)
        state.launchDue(at: at(1))
        #expect(state.task(Tasks.shared, app: Apps.mail) != nil)
        let unnamed = CommandAction.simulateExpiration(identifier: Tasks.shared, app: nil)
        #expect(refusal(unnamed, in: state)?.message.contains("may not act on com.example.mail") == true)
        #expect(refusal(unnamed, in: state, launchedFor: Apps.mail) == nil)
    }
}
