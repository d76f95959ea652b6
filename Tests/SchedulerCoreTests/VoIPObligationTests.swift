import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// What each VoIP push obliges: a call report of its own, owed by the process it went to. A
/// report settles the oldest owed; each missed one is a strike and a kill of its own process.
/// On an injected clock.
@Suite("VoIP obligations per push")
struct VoIPObligationTests {
    typealias Rules = VoIPRulesTests

    static func voipState(_ state: SchedulerState) -> VoIPState? { Rules.voipState(state) }

    static func strikes(_ events: [Event]) -> [Event] { events.filter { $0.type == .voipStrike } }

    @Test func aSecondPushToANewProcessIsOwedByThatProcessWhenTheFirstIsGone() throws {
        var state = makeState()
        try Rules.deliverVoIP(&state, pid: 500, at: t0)
        state.processExited(pid: 500, status: "exited 0", now: at(1))
        try Rules.deliverVoIP(&state, pid: 501, at: at(2))
        #expect(Self.voipState(state)?.debts.map(\.pid) == [500, 501])
        _ = state.takeChanges()

        // The first deadline: a strike for the gone process, nothing killed, the second still owed.
        #expect(Rules.kills(state.effectsOfTime(at: at(5))).isEmpty)
        let first = Self.strikes(state.takeChanges().events)
        #expect(first.map(\.pid) == [500])
        #expect(Self.voipState(state)?.strikes == 1)
        #expect(Self.voipState(state)?.debts.map(\.pid) == [501])
        #expect(Self.voipState(state)?.reportDueBy == at(7), "the field shows the earliest still owed")
        #expect(Self.voipState(state)?.deliveredToPID == 501)
        #expect(state.nextWake(after: at(5)).map { $0 <= at(7) } == true, "the scheduler wakes for the second")

        // The second deadline: the new process is held to account.
        #expect(Rules.kills(state.effectsOfTime(at: at(7))) == [501])
        let second = Self.strikes(state.takeChanges().events)
        #expect(second.map(\.pid) == [501])
        #expect(second.first?.identifier != nil, "the strike names its push")
        #expect(Self.voipState(state)?.strikes == 2)
        #expect(Self.voipState(state)?.debts.isEmpty == true)
        #expect(Self.voipState(state)?.reportDueBy == nil)
    }

    @Test func aReportSettlesOnlyTheOldestPush() throws {
        var state = makeState()
        let firstPlan = try Rules.deliverVoIP(&state, pid: 500, at: t0)
        try Rules.deliverVoIP(&state, pid: 501, at: at(1))
        #expect(state.run(Rules.report(), at: at(2)).outcome.succeeded)
        let left = try #require(Self.voipState(state)?.debts)
        #expect(left.map(\.pid) == [501], "the report answered the first push, not both")
        #expect(!left.contains { $0.push == firstPlan.requests.first?.identifier })
        #expect(Self.voipState(state)?.strikes == 0)
        #expect(Rules.kills(state.effectsOfTime(at: at(5))).isEmpty, "the first push was answered")
        #expect(Rules.kills(state.effectsOfTime(at: at(6))) == [501], "the second was not")
        #expect(Self.voipState(state)?.strikes == 1)
    }

    @Test func twoMissedPushesOfOneProcessAreTwoStrikesAndOneKill() throws {
        var settings = SchedulerSettings()
        settings.voipStrikes = 2
        var state = makeState(settings: settings)
        let plan = try Rules.deliverVoIP(&state, pid: 500, at: t0)
        let voipPush = try #require(state.tasks.values.first { $0.pid == 500 }?.push)
        // A second push handed to the same process (as an attached one would take it).
        var again = plan
        again.launchID += "-2"
        var second = voipPush
        second.id = ident("push-second")
        state.recordVoIPDelivery(second, plan: again, pid: 500, processGroup: 500, processStartTicks: 1, logOffset: nil, now: at(1))
        #expect(Rules.kills(state.effectsOfTime(at: at(5))) == [500])
        #expect(Rules.kills(state.effectsOfTime(at: at(6))).isEmpty, "the process is already being killed")
        let voip = try #require(Self.voipState(state))
        #expect(voip.strikes == 2)
        #expect(voip.isBlocked, "two misses are two strikes in a row")
        #expect(state.apps[Apps.pusher]?.killCount == 1)
    }

    @Test func pushesBeyondTheOwedBoundAreDroppedUntilAReport() throws {
        var state = makeState()
        for index in 0..<VoIPDebt.maximumOwed {
            try Rules.deliverVoIP(&state, pid: Int32(500 + index), at: at(Double(index) * 0.1))
        }
        #expect(Self.voipState(state)?.debts.count == VoIPDebt.maximumOwed)
        _ = state.takeChanges()
        let dropped = state.run(Rules.voip(), at: at(2))
        #expect(dropped.launch == nil)
        #expect(dropped.outcome.message?.hasPrefix("dropped") == true, "\(dropped.outcome)")
        #expect(state.takeChanges().events.first { $0.type == .pushDropped }?.reason == "voipOwed")
        #expect(state.run(Rules.report(), at: at(2.5)).outcome.succeeded)
        try Rules.deliverVoIP(&state, pid: 900, at: at(3))
        #expect(Self.voipState(state)?.debts.count == VoIPDebt.maximumOwed)
    }

    @Test func owedReportsFromAFileAreReadLenientlyAndBounded() throws {
        let good = #"{"push":"push-1","pid":600,"dueBy":"2026-11-22T10:00:07Z"}"#
        let items = [#"{"pid":601}"#, #"{"push":"../x","pid":1,"dueBy":"2026-11-22T10:00:05Z"}"#, "7", good]
            + Array(repeating: good, count: 20)
        let text = #"{"strikes":0,"reportDueBy":"2026-11-22T10:00:01Z","owed":[\#(items.joined(separator: ","))]}"#
        let voip = try JSONFormat.decode(VoIPState.self, from: Data(text.utf8))
        #expect(voip.debts.count == VoIPDebt.maximumOwed)
        let first = try #require(voip.debts.first)
        #expect(first.dueBy == at(5) && first.push == nil && first.pid == nil, "a bad id or pid is left out, the debt kept")
        #expect(voip.reportDueBy == at(5), "the owed list, not the stale field, decides")
        #expect(voip.debts.dropFirst().allSatisfy { $0.pid == 600 && $0.push == ident("push-1") })
        // A record written before debts were kept per push owes its one report.
        let older = try JSONFormat.decode(VoIPState.self, from: Data(#"{"strikes":1,"reportDueBy":"2026-11-22T10:00:05Z","deliveredToPID":700}"#.utf8))
        #expect(older.debts == [VoIPDebt(push: nil, pid: 700, dueBy: at(5))])
        let back = try JSONFormat.decode(VoIPState.self, from: JSONFormat.encode(voip))
        #expect(back == voip)
    }
}
