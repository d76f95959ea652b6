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

    /// One command of every type that names an app, all naming `app`.
    private func actions(naming app: Identifier, identifier: Identifier) -> [CommandAction] {
        [
            .submit(SubmitRequest(app: app, identifier: identifier, kind: .appRefresh)),
            .cancel(app: app, identifier: identifier),
            .cancelAll(app: app),
            .complete(app: app, identifier: identifier, success: true),
            .beginFinishing(app: app, name: nil, pid: 42),
            .setAppEnabled(app: app, enabled: false),
            .attach(app: app, pid: 42, identifiers: [identifier]),
            .detach(app: app, pid: 42),
            .simulateLaunch(identifier: identifier, app: app),
            .simulateExpiration(identifier: identifier, app: app),
            .transferCancel(app: app, identifier: identifier),
            .transferPause(app: app, identifier: identifier),
            .transferResume(app: app, identifier: identifier),
            .transferAcknowledge(app: app, identifier: identifier),
            .transferCreate(TransferRequest(app: app, identifier: identifier, direction: .download,
                                            url: "http://127.0.0.1:1/x")),
            .push(PushRequest(app: app)),
            .answerPush(app: app, identifier: identifier, result: .newData),
            .appUsed(app: app, uses: [t0]),
            .reportCall(CallReport(app: app, uuid: "6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2", handle: "alice")),
            .transferAnswer(DelayedRequestAnswer(app: app, identifier: identifier, disposition: .cancel)),
        ]
    }

    @Test func commandsOnTheLaunchsOwnAppArePermitted() {
        let state = makeState()
        let own = actions(naming: Apps.news, identifier: Tasks.refresh)
        for action in own {
            #expect(refusal(action, in: state) == nil, "\(action)")
        }
    }

    @Test func everyCommandNamingAnotherAppIsRefusedWithBothNames() {
        let state = makeState()
        let other = actions(naming: Apps.mail, identifier: Tasks.shared)
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
