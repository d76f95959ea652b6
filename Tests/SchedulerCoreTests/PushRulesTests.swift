import Foundation
import Testing
import SchedulerCore
import TaskState

/// Apple's delivery rules for background pushes, on an injected clock.
@Suite("Background push rules")
struct PushRulesTests {
    static let storm = try! PushPayload(validating: #"{"aps":{"content-available":1},"storm":"north"}"#)

    /// A push command issued and applied at `now`.
    static func push(_ payload: PushPayload = .wakeUp, priority: PushPriority = .immediate, expiration: Date? = nil,
                     collapse: String? = nil, messageID: String? = nil) -> CommandAction {
        .push(PushRequest(app: Apps.pusher, payload: payload, priority: priority, expiration: expiration,
                          collapseID: collapse, messageID: messageID, source: "test"))
    }

    /// Carries out the launches among `effects` with a made-up pid, as the runtime would.
    static func deliver(_ effects: [SchedulerEffect], in state: inout SchedulerState, pid: Int32, at now: Date) -> [LaunchPlan] {
        let plans = effects.compactMap { effect -> LaunchPlan? in
            if case .launch(let plan) = effect { return plan }
            return nil
        }
        for plan in plans { state.recordLaunch(plan, pid: pid, processGroup: pid, processStartTicks: 1, now: now) }
        return plans
    }

    /// The push tasks running for the pusher app.
    static func pushTasks(_ state: SchedulerState) -> [LaunchedTask] {
        state.tasks.values.filter { $0.app == Apps.pusher && $0.kind == .remoteNotification }.sorted { $0.startedAt < $1.startedAt }
    }

    /// Answers the one running push task.
    static func answer(_ result: FetchResult, in state: inout SchedulerState, at now: Date) throws {
        let task = try #require(pushTasks(state).first)
        let outcome = state.run(.answerPush(app: Apps.pusher, identifier: task.identifier, result: result), at: now).outcome
        #expect(outcome.succeeded, "\(outcome)")
    }

    @Test func aPushIsDeliveredAtOnceWithItsPayloadAsARemoteNotificationTask() throws {
        var state = makeState()
        let result = state.run(Self.push(Self.storm), at: t0)
        #expect(result.outcome.succeeded)
        let plan = try #require(result.launch, "a deliverable push is launched by its own command")
        #expect(plan.reason == "remoteNotification")
        #expect(plan.requests.map(\.kind) == [.remoteNotification])
        _ = Self.deliver(result.effects, in: &state, pid: 500, at: t0)
        let task = try #require(Self.pushTasks(state).first)
        #expect(task.push?.payload == Self.storm, "the task carries the payload byte for byte")
        #expect(task.deadline == t0.addingTimeInterval(SchedulerSettings().appRefreshBudgetSeconds))
        #expect(state.pushes.isEmpty, "a delivered push is no longer held")
        #expect(state.changes.eventTypes.contains(.pushReceived))
        #expect(state.changes.eventTypes.contains(.pushDelivered))
    }

    @Test func theBudgetHoldsTheFourthPushOfAnHourUntilTheFirstLeavesTheWindow() throws {
        var state = makeState()
        for minute in 0..<3 {
            let now = at(Double(minute) * 60)
            let result = state.run(Self.push(), at: now)
            #expect(Self.deliver(result.effects, in: &state, pid: Int32(500 + minute), at: now).count == 1, "push \(minute + 1) of 3 is delivered")
            try Self.answer(.newData, in: &state, at: now.addingTimeInterval(5))
        }
        #expect(state.pushBudgetLeft(of: Apps.pusher, at: at(200)) == 0)
        let fourth = state.run(Self.push(), at: at(300))
        #expect(fourth.launch == nil)
        #expect(fourth.outcome.message?.hasPrefix("held") == true, "\(fourth.outcome.message ?? "")")
        let held = try #require(state.pushes.values.first)
        #expect(state.pushBlockers(for: held, at: at(300)) == [.pushBudget])
        // The first delivery (t0) leaves the rolling hour at t0 + 1 h: that is when it may go.
        #expect(state.nextWake(after: at(300)) == at(hour))
        #expect(state.effectsOfTime(at: at(hour - 1)).isEmpty)
        let effects = state.effectsOfTime(at: at(hour))
        #expect(Self.deliver(effects, in: &state, pid: 600, at: at(hour)).count == 1)
        #expect(state.pushes.isEmpty)
    }

    @Test func heldPushesCoalesceToTheNewestPerCollapseID() throws {
        var state = makeState()
        // A push being handled holds the others back (one at a time per app).
        _ = Self.deliver(state.run(Self.push(), at: t0).effects, in: &state, pid: 500, at: t0)
        for number in 1...3 {
            state.run(Self.push(try PushPayload(validating: #"{"aps":{"content-available":1},"n":\#(number)}"#)), at: at(Double(number)))
        }
        state.run(Self.push(collapse: "scores"), at: at(4))
        state.run(Self.push(collapse: "scores"), at: at(5))
        let held = state.pushes.values.sorted { $0.receivedAt < $1.receivedAt }
        #expect(held.count == 2, "one per collapse group")
        #expect(held[0].payload.fields["n"] == .integer(3), "the newest of the group without a collapse id is kept")
        #expect(held[0].coalescedCount == 2)
        #expect(held[1].collapseID == "scores")
        #expect(held[1].coalescedCount == 1)
        #expect(state.changes.eventTypes.filter { $0 == .pushCoalesced }.count == 3, "each replaced push is an event")
        #expect(state.pushBlockers(for: held[0], at: at(6)) == [.handlingPush])
        // The handled push answers; the next goes out (oldest first, one at a time).
        try Self.answer(.newData, in: &state, at: at(10))
        let plans = Self.deliver(state.effectsOfTime(at: at(10)), in: &state, pid: 501, at: at(10))
        #expect(plans.flatMap(\.requests).map(\.identifier) == [held[0].id])
    }

    @Test func priorityFiveWaitsForLowPowerToEndAndPriorityTenDoesNot() throws {
        var state = makeState(probed: Conditions(lowPower: true))
        let conserve = state.run(Self.push(priority: .conserve, collapse: "a"), at: t0)
        #expect(conserve.launch == nil)
        let held = try #require(state.pushes.values.first)
        #expect(state.pushBlockers(for: held, at: t0) == [.lowPower])
        let immediate = state.run(Self.push(priority: .immediate, collapse: "b"), at: at(1))
        #expect(immediate.launch != nil, "priority 10 is delivered at once within the budget")
        _ = Self.deliver(immediate.effects, in: &state, pid: 500, at: at(1))
        try Self.answer(.newData, in: &state, at: at(2))
        #expect(state.effectsOfTime(at: at(3)).isEmpty, "still low power")
        state.run(.setConditions(ConditionOverrides(lowPower: false)), at: at(4))
        #expect(Self.deliver(state.effectsOfTime(at: at(4)), in: &state, pid: 501, at: at(4)).count == 1)
    }

    @Test func expiredHeldPushesAreDroppedWithAnEvent() throws {
        var state = makeState(probed: Conditions(lowPower: true))
        state.run(Self.push(priority: .conserve, expiration: at(60)), at: t0)
        #expect(state.pushes.count == 1)
        #expect(state.nextWake(after: at(1)) == at(60))
        _ = state.takeChanges()
        #expect(state.effectsOfTime(at: at(60)).isEmpty)
        #expect(state.pushes.isEmpty)
        #expect(state.takeChanges().eventTypes == [.pushExpired])
    }

    @Test func expirationZeroMeansDeliverNowOrDrop() throws {
        var state = makeState(probed: Conditions(lowPower: true))
        let dropped = state.run(Self.push(priority: .conserve, expiration: Date(timeIntervalSince1970: 0)), at: t0)
        #expect(dropped.outcome.succeeded)
        #expect(dropped.outcome.message?.hasPrefix("dropped") == true)
        #expect(state.pushes.isEmpty)
        #expect(state.changes.eventTypes.contains(.pushDropped))
        let delivered = state.run(Self.push(priority: .immediate, expiration: Date(timeIntervalSince1970: 0)), at: at(1))
        #expect(delivered.launch != nil, "deliverable now, so delivered")
    }

    @Test func aDisabledAppGetsNoPushesAndDisablingDropsHeldOnes() throws {
        var state = makeState(probed: Conditions(lowPower: true))
        state.run(Self.push(priority: .conserve), at: t0)
        #expect(state.pushes.count == 1)
        state.run(.setAppEnabled(app: Apps.pusher, enabled: false), at: at(1))
        #expect(state.pushes.isEmpty, "switching the app off drops what it held")
        let result = state.run(Self.push(), at: at(2))
        #expect(result.launch == nil)
        #expect(result.outcome.message?.contains("switched off") == true)
        #expect(state.pushes.isEmpty)
        #expect(state.changes.eventTypes.filter { $0 == .pushDropped }.count == 2)
    }

    @Test func aRepeatedMessageIDIsDeliveredOnce() throws {
        var state = makeState()
        let first = state.run(Self.push(messageID: "m1"), at: t0)
        #expect(Self.deliver(first.effects, in: &state, pid: 500, at: t0).count == 1)
        try Self.answer(.newData, in: &state, at: at(0.5))
        let again = state.run(Self.push(messageID: "m1"), at: at(1))
        #expect(again.launch == nil)
        #expect(again.outcome.message?.contains("already received") == true)
        #expect(state.pushes.isEmpty)
    }

    @Test func threeNoDataAnswersInARowCutTheBudgetAndNewDataRestoresIt() throws {
        var settings = SchedulerSettings()
        settings.pushBudgetPerHour = 6
        var state = makeState(settings: settings)
        for number in 0..<3 {
            let now = at(Double(number) * 10)
            _ = Self.deliver(state.run(Self.push(), at: now).effects, in: &state, pid: Int32(500 + number), at: now)
            try Self.answer(.noData, in: &state, at: now.addingTimeInterval(1))
        }
        #expect(state.pushBudget(of: Apps.pusher) == 5)
        #expect(state.apps[Apps.pusher]?.lastPushResult == .noData)
        _ = Self.deliver(state.run(Self.push(), at: at(40)).effects, in: &state, pid: 510, at: at(40))
        try Self.answer(.newData, in: &state, at: at(41))
        #expect(state.pushBudget(of: Apps.pusher) == 6)
    }

    @Test func aPushThatOverrunsIsKilledThrottledAndCutsTheBudget() throws {
        var state = makeState()
        _ = Self.deliver(state.run(Self.push(), at: t0).effects, in: &state, pid: 500, at: t0)
        let budget = SchedulerSettings().appRefreshBudgetSeconds
        let grace = SchedulerSettings().expirationGraceSeconds
        #expect(state.expire(at: at(budget)).count == 1, "the expiration signal")
        let kills = state.expire(at: at(budget + grace))
        #expect(kills.contains { if case .kill(500, _, _) = $0 { return true } else { return false } })
        #expect(state.pushBudget(of: Apps.pusher) == 2)
        #expect(state.apps[Apps.pusher]?.isThrottled(at: at(budget + grace + 1)) == true)
    }

    @Test func anAttachedProcessWithAPushHandlerTakesThePushAndOneWithoutDoesNot() throws {
        var state = makeState()
        let refresh = ident("com.example.pusher.refresh")
        state.run(.attach(app: Apps.pusher, pid: 700, identifiers: [refresh]), at: t0)
        #expect(state.run(Self.push(), at: at(1)).launch?.handOver == nil, "no push handler: a new process")
        var other = makeState()
        other.run(.attach(app: Apps.pusher, pid: 700, identifiers: [refresh], acceptsPushes: true), at: t0)
        #expect(other.run(Self.push(), at: at(1)).launch?.handOver?.pid == 700)
    }

    @Test func pushesNeedTheRemoteNotificationModeAndAKnownApp() {
        var state = makeState()
        let noMode = state.run(.push(PushRequest(app: Apps.news)), at: t0)
        #expect(noMode.errorName == "notPermitted")
        let unknown = state.run(.push(PushRequest(app: Apps.ghost)), at: t0)
        #expect(unknown.errorName == "unknownApp")
        #expect(state.pushes.isEmpty)
    }

    @Test(arguments: [
        (#"{"aps":{"content-available":1}}"#, nil),
        (#"[1,2]"#, PushPayloadError.notAnObject),
        (#"{"aps":{"content-available":true}}"#, PushPayloadError.notBackground),
        (#"{"aps":{"alert":"hi"}}"#, PushPayloadError.notBackground),
        (#"{"aps":"#, PushPayloadError.notJSON),
        (#"{"aps":{"content-available":1},"pad":"\#(String(repeating: "x", count: 4096))"}"#, PushPayloadError.tooLarge(4136)),
    ] as [(String, PushPayloadError?)])
    func payloadsAreCheckedAsAPNsDoes(text: String, expected: PushPayloadError?) {
        do {
            _ = try PushPayload(validating: text)
            #expect(expected == nil)
        } catch {
            #expect(error == expected)
        }
    }
}
