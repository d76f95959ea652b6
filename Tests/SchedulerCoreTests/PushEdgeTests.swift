import Foundation
import Testing
import SchedulerCore
import TaskState

/// The push rules where input is hostile or two rules meet: numbers from files, a manifest that
/// changes under held pushes, late commands, a refresh due in the same turn.
@Suite("Background push rules: edges")
struct PushEdgeTests {
    typealias Rules = PushRulesTests

    @Test func numbersFromTheAppRecordNeverTrap() throws {
        var snapshot = StateSnapshot()
        var record = AppRecord(id: Apps.pusher)
        record.pushBudgetCut = Int.min
        record.pushNoDataInARow = Int.max
        snapshot.apps = [record]
        var state = SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(), snapshot: snapshot,
                                   conditions: ConditionsRecord(probed: Conditions(), probedAt: t0))
        #expect(state.pushBudget(of: Apps.pusher) == 3, "a cut below zero counts as none")
        _ = Rules.deliver(state.run(Rules.push(), at: t0).effects, in: &state, pid: 500, at: t0)
        try Rules.answer(.noData, in: &state, at: at(1))
        #expect(state.pushBudget(of: Apps.pusher) == 2, "noData after a corrupt streak cuts once, without trapping")
        record.pushBudgetCut = Int.max
        snapshot.apps = [record]
        let other = SchedulerState(settings: SchedulerSettings(), catalog: makeCatalog(), snapshot: snapshot,
                                   conditions: ConditionsRecord(probed: Conditions(), probedAt: t0))
        #expect(other.pushBudget(of: Apps.pusher) == 1, "never under one push an hour")
        _ = other.nextWake(after: t0)
    }

    @Test(arguments: [
        (#""coalescedCount":9223372036854775807"#, "coalescedCount"),
        (#""coalescedCount":-1"#, "coalescedCount"),
        (#""coalescedCount":0,"source":"\u001b[2Jx""#, "control character"),
        (#""coalescedCount":0,"collapseId":"""#, "collapse id"),
    ])
    func aHeldPushFileWithBadFieldsIsRefused(extra: String, mentions: String) {
        let text = #"{"app":"com.example.pusher","id":"push-1","payload":"{\"aps\":{\"content-available\":1}}","priority":10,"receivedAt":"2026-11-22T10:00:00.000Z",\#(extra)}"#
        do {
            _ = try JSONFormat.decode(HeldPush.self, from: Data(text.utf8))
            Issue.record("decoded \(text)")
        } catch {
            #expect("\(error)".contains(mentions), "\(error)")
        }
    }

    @Test func heldPushesAreDroppedWhenTheManifestLosesTheMode() throws {
        var state = makeState(probed: Conditions(lowPower: true))
        state.run(Rules.push(priority: .conserve), at: t0)
        #expect(state.pushes.count == 1)
        var catalog = makeCatalog()
        catalog.manifests[Apps.pusher]?.backgroundModes = [.fetch]
        state.updateCatalog(catalog, now: at(1))
        _ = state.takeChanges()
        #expect(state.effectsOfTime(at: at(1)).isEmpty)
        #expect(state.pushes.isEmpty)
        #expect(state.takeChanges().events.map(\.reason) == ["notPermitted"])
    }

    @Test func expirationZeroAppliedLongAfterItWasSentIsDropped() {
        var state = makeState()
        let sent = Command(issuedAt: t0, issuerPID: 1, action: Rules.push(expiration: Date(timeIntervalSince1970: 0)))
        let late = state.apply(sent, now: at(60))
        #expect(late.launch == nil)
        #expect(late.outcome.message == "dropped: expiration 0 and it arrived 60 s after it was sent")
        let prompt = state.apply(Command(issuedAt: at(61), issuerPID: 1, action: Rules.push(expiration: Date(timeIntervalSince1970: 0))), now: at(62))
        #expect(prompt.launch != nil)
    }

    @Test func aPushAndARefreshDueInTheSameTurnGoOutInOneProcess() throws {
        var state = makeState()
        let refresh = ident("com.example.pusher.refresh")
        state.submitRequest(refresh, app: Apps.pusher, kind: .appRefresh, earliest: at(10), at: t0)
        let result = state.run(Rules.push(), at: at(10))
        let plan = try #require(result.launch)
        #expect(Set(plan.requests.map(\.kind)) == [.appRefresh, .remoteNotification])
        #expect(plan.pushPayload == .wakeUp)
        _ = Rules.deliver(result.effects, in: &state, pid: 500, at: at(10))
        #expect(state.dueLaunches(at: at(10)).isEmpty, "the refresh went with the push")
        #expect(state.tasks.values.filter { $0.pid == 500 }.count == 2)
    }

    @Test func aPushIsNotMergedIntoAHandOverToAProcessWithoutAPushHandler() throws {
        var state = makeState()
        let refresh = ident("com.example.pusher.refresh")
        state.run(.attach(app: Apps.pusher, pid: 700, identifiers: [refresh]), at: t0)
        state.submitRequest(refresh, app: Apps.pusher, kind: .appRefresh, earliest: at(10), at: t0)
        let result = state.run(Rules.push(), at: at(10))
        let plan = try #require(result.launch)
        #expect(plan.requests.map(\.kind) == [.remoteNotification], "the push gets its own launch")
        #expect(plan.handOver == nil)
        let due = state.dueLaunches(at: at(10))
        #expect(due.first?.handOver?.pid == 700, "the refresh still goes to the running process")
    }
}
