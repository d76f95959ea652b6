import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// VoIP pushes (PushKit's rule, iOS 13 on): delivered at once outside the budget, the call must
/// be reported within `voipReportSeconds`, and `voipStrikes` failures in a row drop the app's VoIP
/// pushes until a person uses it. On an injected clock.
@Suite("VoIP push rules")
struct VoIPRulesTests {
    static func voip(expiration: Date? = nil) -> CommandAction {
        .push(PushRequest(app: Apps.pusher, expiration: expiration, source: "test", type: .voip))
    }

    static func report(_ uuid: String = UUID().uuidString, handle: String = "+1 555 0100") -> CommandAction {
        .reportCall(CallReport(app: Apps.pusher, uuid: uuid, handle: handle, notifier: "notify-send"))
    }

    /// Sends a VoIP push at `now` and records its launch with `pid`; returns the plan.
    @discardableResult
    static func deliverVoIP(_ state: inout SchedulerState, pid: Int32, at now: Date) throws -> LaunchPlan {
        let result = state.run(voip(), at: now)
        #expect(result.outcome.succeeded, "\(result.outcome)")
        let plan = try #require(result.launch, "a VoIP push is launched by its own command")
        state.recordLaunch(plan, pid: pid, processGroup: pid, processStartTicks: 1, now: now)
        return plan
    }

    static func voipState(_ state: SchedulerState) -> VoIPState? { state.apps[Apps.pusher]?.voip }

    static func kills(_ effects: [SchedulerEffect]) -> [Int32] {
        effects.compactMap { effect -> Int32? in
            if case .kill(let pid, _, _) = effect { return pid }
            return nil
        }
    }

    @Test func aVoIPPushIsLaunchedAtOnceWithItsOwnReasonAndCostsNoBudget() throws {
        var state = makeState()
        for round in 0..<5 {
            let now = at(Double(round) * 60)
            let plan = try Self.deliverVoIP(&state, pid: Int32(500 + round), at: now)
            #expect(plan.reason == "voipPush")
            #expect(plan.requests.map(\.kind) == [.remoteNotification])
            #expect(state.run(Self.report(), at: now.addingTimeInterval(1)).outcome.succeeded)
        }
        #expect(state.pushBudgetLeft(of: Apps.pusher, at: at(300)) == SchedulerSettings().pushBudgetPerHour,
                "five VoIP pushes in five minutes took nothing from the budget")
        #expect(state.pushes.isEmpty, "none was held")
        let task = try #require(state.tasks.values.first { $0.pid == 504 })
        #expect(task.launchReason == "voipPush")
        #expect(task.push?.isVoIP == true)
        #expect(state.changes.eventTypes.filter { $0 == .pushDelivered }.count == 5)
    }

    @Test func aVoIPPushIsNeverHeldNotByLowPowerABusyPushTheBudgetOrAThrottle() throws {
        var state = makeState(probed: Conditions(lowPower: true))
        var record = state.app(Apps.pusher)
        record.throttledUntil = at(hour)
        record.pushDeliveries = [at(-60), at(-50), at(-40)]
        state.setApp(record)
        // A background push of priority 5 is held behind all of it...
        let held = state.run(.push(PushRequest(app: Apps.pusher, priority: .conserve, source: "test")), at: t0)
        #expect(held.launch == nil)
        #expect(held.outcome.message?.hasPrefix("held") == true, "\(held.outcome.message ?? "")")
        // ...and a VoIP push goes at once, without taking or coalescing the held one.
        let plan = try Self.deliverVoIP(&state, pid: 700, at: at(1))
        #expect(plan.reason == "voipPush")
        #expect(state.pushes.count == 1, "the held background push is still there")
        #expect(!state.changes.eventTypes.contains(.pushCoalesced))
        // A second one while the first is handled goes at once too.
        try Self.deliverVoIP(&state, pid: 701, at: at(2))
        #expect(state.tasks.values.filter { $0.push?.isVoIP == true }.count == 2)
    }

    @Test func aVoIPPushToADisabledAppIsDroppedWithAnEvent() throws {
        var state = makeState()
        state.run(.setAppEnabled(app: Apps.pusher, enabled: false), at: t0)
        _ = state.takeChanges()
        let result = state.run(Self.voip(), at: at(1))
        #expect(result.launch == nil)
        #expect(result.outcome.message?.hasPrefix("dropped") == true, "\(result.outcome.message ?? "")")
        let dropped = try #require(state.takeChanges().events.first { $0.type == .pushDropped })
        #expect(dropped.reason == "appDisabled")
        #expect(state.pushes.isEmpty)
    }

    @Test func aReportInTimeSettlesThePushAndClearsTheStrikes() throws {
        var state = makeState()
        var record = state.app(Apps.pusher)
        record.voip = VoIPState(strikes: 2)
        state.setApp(record)
        try Self.deliverVoIP(&state, pid: 500, at: t0)
        #expect(Self.voipState(state)?.reportDueBy == at(5), "the default voipReportSeconds is 5")
        #expect(state.nextWake(after: t0).map { $0 <= at(5) } == true, "the scheduler wakes for the deadline")
        let reported = state.run(Self.report(handle: "sip:alice@example.org"), at: at(2))
        #expect(reported.outcome.succeeded, "\(reported.outcome)")
        let voip = try #require(Self.voipState(state))
        #expect(voip.strikes == 0)
        #expect(voip.reportDueBy == nil)
        #expect(voip.lastReport == at(2))
        #expect(voip.lastNotifier == "notify-send")
        #expect(Self.kills(state.effectsOfTime(at: at(10))).isEmpty, "nothing is killed once reported")
        #expect(state.changes.eventTypes.contains(.callReported))
    }

    @Test func noReportInTimeKillsTheProcessAndCountsAStrike() throws {
        var state = makeState()
        try Self.deliverVoIP(&state, pid: 500, at: t0)
        #expect(Self.kills(state.effectsOfTime(at: at(4.9))).isEmpty, "not before the deadline")
        _ = state.takeChanges()
        let effects = state.effectsOfTime(at: at(5))
        #expect(Self.kills(effects) == [500])
        let events = state.takeChanges().events
        let killed = try #require(events.first { $0.type == .killed })
        #expect(killed.reason == "voipNotReported")
        #expect(killed.pid == 500)
        #expect(events.contains { $0.type == .voipStrike && $0.reason == "voipNotReported" })
        #expect(Self.voipState(state)?.strikes == 1)
        #expect(state.tasks.isEmpty, "the push's task ended with its process")
        #expect(state.processes[500]?.killDecidedAt == at(5), "the kill is recorded before it is sent")
    }

    @Test func aProcessAlreadyGoneIsNotKilledButStillCountsAStrike() throws {
        var state = makeState()
        try Self.deliverVoIP(&state, pid: 500, at: t0)
        state.processExited(pid: 500, status: "exited 0", now: at(1))
        let effects = state.effectsOfTime(at: at(5))
        #expect(Self.kills(effects).isEmpty)
        #expect(Self.voipState(state)?.strikes == 1)
    }

    @Test func afterTheStrikesInARowVoIPPushesAreDroppedUntilAPersonUsesTheApp() throws {
        var settings = SchedulerSettings()
        settings.voipStrikes = 3
        settings.voipReportSeconds = 2
        var state = makeState(settings: settings)
        for round in 0..<3 {
            let now = at(Double(round) * 100)
            try Self.deliverVoIP(&state, pid: Int32(500 + round), at: now)
            #expect(Self.kills(state.effectsOfTime(at: now.addingTimeInterval(2))) == [Int32(500 + round)])
        }
        let voip = try #require(Self.voipState(state))
        #expect(voip.strikes == 3)
        #expect(voip.blockedSince == at(202))
        #expect(state.changes.eventTypes.contains(.voipBlocked))
        _ = state.takeChanges()

        for round in 0..<2 {
            let dropped = state.run(Self.voip(), at: at(300 + Double(round)))
            #expect(dropped.launch == nil)
            #expect(dropped.outcome.message?.hasPrefix("dropped") == true)
        }
        let drops = state.takeChanges().events.filter { $0.type == .pushDropped }
        #expect(drops.count == 2, "an event for each")
        #expect(drops.allSatisfy { $0.reason == "voipBlocked" })

        // A use from before the block does not lift it (an imported trace, say)...
        state.run(.appUsed(app: Apps.pusher, uses: [at(150)]), at: at(400))
        #expect(Self.voipState(state)?.isBlocked == true)
        // ...nor one a launch of the app sends with its launch token...
        let token = Command(issuedAt: at(401), issuerPID: 1, launchToken: try LaunchToken(validating: Self.tokenText),
                            action: .appUsed(app: Apps.pusher, uses: [at(401)]))
        _ = state.apply(token, now: at(401))
        #expect(Self.voipState(state)?.isBlocked == true)
        // ...a person's use does.
        state.run(.appUsed(app: Apps.pusher, uses: [at(410)]), at: at(410))
        #expect(Self.voipState(state)?.isBlocked == false)
        #expect(Self.voipState(state)?.strikes == 0)
        #expect(state.takeChanges().eventTypes.contains(.voipUnblocked))
        try Self.deliverVoIP(&state, pid: 900, at: at(420))
    }

    @Test func aReportResetsTheCountBetweenFailures() throws {
        var settings = SchedulerSettings()
        settings.voipStrikes = 2
        var state = makeState(settings: settings)
        try Self.deliverVoIP(&state, pid: 500, at: t0)
        _ = state.effectsOfTime(at: at(5))
        #expect(Self.voipState(state)?.strikes == 1)
        try Self.deliverVoIP(&state, pid: 501, at: at(100))
        #expect(state.run(Self.report(), at: at(101)).outcome.succeeded)
        #expect(Self.voipState(state)?.strikes == 0)
        try Self.deliverVoIP(&state, pid: 502, at: at(200))
        _ = state.effectsOfTime(at: at(205))
        #expect(Self.voipState(state)?.strikes == 1, "one failure after a report: not two in a row")
        #expect(Self.voipState(state)?.isBlocked == false)
    }

    @Test func aCallIsReportedOnceAndABadHandleOrUUIDIsRefusedWithItsReason() throws {
        var state = makeState()
        let uuid = "6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2"
        #expect(state.run(Self.report(uuid), at: t0).outcome.succeeded)
        let again = state.run(Self.report(uuid.lowercased()), at: at(1)).outcome
        #expect(again.error?.code == .alreadyReported, "\(again)")
        #expect(again.error?.message.contains("already reported") == true)
        for (handle, words) in [("", "1 to 128"), (String(repeating: "a", count: 129), "1 to 128"),
                                ("bob\u{1b}[2J", "U+1B"), ("a'b", "'''"), (" alice", "space")] {
            let outcome = state.run(Self.report(handle: handle), at: at(2)).outcome
            #expect(outcome.error?.code == .invalidCommand, "\(handle): \(outcome)")
            #expect(outcome.error?.message.contains(words) == true, "\(handle): \(outcome.error?.message ?? "")")
        }
        for bad in ["not-a-uuid", "6F1C2A3B0D4E4F5A8B6C7D8E9FA0B1C2", ""] {
            let outcome = state.run(Self.report(bad), at: at(3)).outcome
            #expect(outcome.error?.code == .invalidCommand, "\(bad): \(outcome)")
            #expect(outcome.error?.message.contains("call uuid") == true)
        }
        #expect(state.run(Self.report(handle: "+1 (555) 010-2030 #2"), at: at(4)).outcome.succeeded)
    }

    @Test func aHandleIsBoundedInBytesAndEveryScalarIsChecked() {
        var state = makeState()
        let heavy = "a" + String(repeating: "\u{0301}", count: 300)
        #expect(heavy.count == 1, "one character")
        let outcome = state.run(Self.report(handle: heavy), at: t0).outcome
        #expect(outcome.error?.code == .invalidCommand, "\(outcome)")
        #expect(outcome.error?.message.contains("512 bytes") == true, "\(outcome.error?.message ?? "")")
        for (handle, shown) in [("alice\u{200D}bob", "U+200D"), ("bo\u{0301}\u{202E}b", "U+202E"), ("e\u{20AC}", "'€'")] {
            let refused = state.run(Self.report(handle: handle), at: at(1)).outcome
            #expect(refused.error?.message.contains(shown) == true, "\(handle.unicodeScalars.map(\.value)): \(refused)")
        }
        #expect(state.run(Self.report(handle: "Jose\u{0301} +1 555"), at: at(2)).outcome.succeeded,
                "a name written decomposed is a handle")
    }

    /// A scheduler that stopped between a VoIP push's command and its launch left it in `pushes/`:
    /// it goes out at the next turn, in a launch of its own; without a manifest it is dropped,
    /// and in neither case does the scheduler wake again and again for it.
    @Test func aVoIPPushLeftHeldByARestartGoesOutAtOnceOrIsDropped() throws {
        var state = makeState()
        state.setPush(HeldPush(app: Apps.pusher, id: ident("push-0a"), payload: .wakeUp, priority: .immediate,
                               receivedAt: at(-10), type: .voip))
        state.setPush(HeldPush(app: Apps.ghost, id: ident("push-0b"), payload: .wakeUp, priority: .immediate,
                               receivedAt: at(-10), type: .voip))
        #expect(state.nextWake(after: t0) == t0)
        let plans = state.effectsOfTime(at: t0).compactMap { effect -> LaunchPlan? in
            if case .launch(let plan) = effect { return plan }
            return nil
        }
        #expect(plans.map(\.reason) == ["voipPush"])
        #expect(plans.first?.requests.map(\.identifier) == [ident("push-0a")])
        let dropped = try #require(state.takeChanges().events.first { $0.type == .pushDropped })
        #expect(dropped.reason == "noManifest")
        #expect(dropped.app == Apps.ghost)
        for plan in plans { state.recordLaunch(plan, pid: 800, processGroup: 800, processStartTicks: 1, now: t0) }
        #expect(state.pushes.isEmpty)
        #expect(state.nextWake(after: t0) == at(5), "only the report deadline is left to wake for")
    }

    @Test func aVoIPStateFromAFileIsReadLeniently() throws {
        let text = #"{"strikes":-4,"blockedSince":"not a date","reportDueBy":"2026-11-22T10:00:05Z","deliveredToPID":1,"lastNotifier":"smoke","recentCalls":["x","6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2"]}"#
        let voip = try JSONFormat.decode(VoIPState.self, from: Data(text.utf8))
        #expect(voip.strikes == 0)
        #expect(voip.blockedSince == nil)
        #expect(voip.reportDueBy == at(5))
        #expect(voip.deliveredToPID == nil, "pid 1 is never one to kill")
        #expect(voip.lastNotifier == nil)
        #expect(voip.recentCalls == ["6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2"])
    }

    /// A well-formed launch token (the core does not verify it; the runtime does).
    static let tokenText = "com.example.pusher:launch-1:" + String(repeating: "a", count: LaunchToken.macLength)
}
