import Foundation
import Testing
import SchedulerCore
import TaskState

/// Launches coalesced across apps and `maxConcurrentLaunches`, with an injected clock.
@Suite("Coalescing across apps")
struct CrossAppCoalescingTests {
    static let apps = (1...8).map { ident("com.example.app\($0)") }
    static func refresh(_ app: Identifier) -> Identifier { ident("\(app).refresh") }

    static func state(window: Double = 60, maxConcurrent: Int = 4, probed: Conditions = Conditions()) -> SchedulerState {
        var settings = SchedulerSettings()
        settings.coalescingWindowSeconds = window
        settings.maxConcurrentLaunches = maxConcurrent
        settings.usagePrediction = false
        let manifests = apps.map { app in
            AppManifest(id: app, executable: "/bin/true", permittedIdentifiers: [refresh(app), ident("\(app).clean")],
                        backgroundModes: [.fetch, .processing])
        }
        let catalog = ManifestCatalog(manifests: Dictionary(uniqueKeysWithValues: manifests.map { ($0.id, $0) }))
        return SchedulerState(settings: settings, catalog: catalog, conditions: ConditionsRecord(probed: probed, probedAt: t0))
    }

    /// Five apps whose refreshes come due 3 s apart, from 100 s on.
    static func fiveApps(window: Double = 60, maxConcurrent: Int = 8) -> SchedulerState {
        var state = state(window: window, maxConcurrent: maxConcurrent)
        for (offset, app) in apps.prefix(5).enumerated() {
            state.submitRequest(refresh(app), app: app, kind: .appRefresh, earliest: at(100 + 3 * Double(offset)), at: t0)
        }
        return state
    }

    /// The scheduler's own timer walked from `t0`: each wake it sets, until one launches something.
    static func wakesUntilALaunch(_ state: SchedulerState) throws -> (wakes: [Date], plans: [LaunchPlan]) {
        var wakes: [Date] = []
        var now = t0
        var plans: [LaunchPlan] = []
        while plans.isEmpty {
            now = try #require(state.nextWake(after: now))
            wakes.append(now)
            plans = state.dueLaunches(at: now)
        }
        return (wakes, plans)
    }

    @Test func appsDueWithinTheWindowShareOneTurn() throws {
        let state = Self.fiveApps()
        // Walk the scheduler's own timer: it wakes once, when the last of the five comes due.
        let (wakes, plans) = try Self.wakesUntilALaunch(state)
        #expect(wakes == [at(112)], "no wake-up for each app before")
        #expect(plans.map(\.app) == Array(Self.apps.prefix(5)), "one turn, one launch per app")
    }

    @Test func aRequestReadyWithinTheComingTurnWakesNothingOfItsOwn() throws {
        // A sixth app's refresh is due at 104 but throttled until 106: it does not join the
        // five's turn (something holds it at its date), yet it is ready before that turn, and
        // would only be held for it. One wake-up at 112 still launches all six.
        let five = Self.fiveApps()
        var snapshot = StateSnapshot()
        snapshot.requests = Array(five.requests.values)
        let sixth = Self.apps[5]
        snapshot.requests.append(PendingRequest(app: sixth, identifier: Self.refresh(sixth), kind: .appRefresh,
                                                earliestBeginDate: at(104), submittedAt: t0))
        snapshot.apps = [AppRecord(id: sixth, throttledUntil: at(106))]
        let state = SchedulerState(settings: five.settings, catalog: five.catalog, snapshot: snapshot, conditions: five.conditions)
        let (wakes, plans) = try Self.wakesUntilALaunch(state)
        #expect(wakes == [at(112)], "no wake-up at 106 only to hold the sixth until 112")
        #expect(plans.map(\.app) == Array(Self.apps.prefix(6)), "one turn, one launch per app")
        // Woken at 106 anyway (a command, say), the scheduler holds it for the same turn.
        #expect(state.launchTurn(at: at(106)).coalescingEnds == at(112))
        #expect(state.launchTurn(at: at(106)).blockers[TaskKey(app: sixth, identifier: Self.refresh(sixth))] == [.coalescing])
    }

    @Test func aHeldLaunchShowsCoalescingWithTheTimeItEnds() throws {
        let state = Self.fiveApps()
        let turn = state.launchTurn(at: at(104))
        #expect(turn.plans.isEmpty)
        #expect(turn.coalescingEnds == at(112))
        #expect(turn.nextLook == at(112), "looked at again only when the hold ends")
        let first = TaskKey(app: Self.apps[0], identifier: Self.refresh(Self.apps[0]))
        let later = TaskKey(app: Self.apps[4], identifier: Self.refresh(Self.apps[4]))
        #expect(turn.blockers[first] == [.coalescing])
        #expect(turn.blockers[later] == [.earliestBeginDate])
        #expect(state.nextWake(after: at(104)) == at(112))
    }

    @Test func nothingRunsBeforeItsDate() {
        let state = Self.fiveApps()
        var now = t0
        while now < at(112) {
            for plan in state.dueLaunches(at: now) {
                for request in plan.requests { #expect((request.earliestBeginDate ?? t0) <= now, "launched early at \(now)") }
            }
            now = now.addingTimeInterval(0.5)
        }
    }

    @Test func nothingWaitsPastTheWindow() throws {
        // A chain of apps each due 20 s after the last: the window is anchored on the first one.
        var state = Self.state(window: 30, maxConcurrent: 8)
        for (offset, app) in Self.apps.prefix(4).enumerated() {
            state.submitRequest(Self.refresh(app), app: app, kind: .appRefresh, earliest: at(100 + 20 * Double(offset)), at: t0)
        }
        #expect(state.dueLaunches(at: at(100)).isEmpty, "held for the app due at 120")
        #expect(state.launchTurn(at: at(100)).coalescingEnds == at(120))
        let plans = state.dueLaunches(at: at(120))
        #expect(plans.map(\.app) == Array(Self.apps.prefix(2)), "the one due at 140 is past the window of the first")
        var launched = state
        launched.launchDue(at: at(120))
        #expect(launched.dueLaunches(at: at(140)).isEmpty, "the next pair coalesces in its own window")
        #expect(launched.dueLaunches(at: at(160)).map(\.app) == [Self.apps[2], Self.apps[3]])
    }

    @Test func aLateLaunchIsNotHeldAtAll() {
        // Ready since 100 (held by the network until now): its window is over, it goes at once.
        var state = Self.state(probed: Conditions(network: false))
        state.submitRequest(ident("\(Self.apps[0]).clean"), app: Self.apps[0], kind: .processing, earliest: at(100), network: true, at: t0)
        state.submitRequest(Self.refresh(Self.apps[1]), app: Self.apps[1], kind: .appRefresh, earliest: at(500), at: t0)
        #expect(state.dueLaunches(at: at(200)).isEmpty)
        state.run(.setConditions(ConditionOverrides(network: true)), at: at(480))
        #expect(state.dueLaunches(at: at(480)).map(\.app) == [Self.apps[0]])
    }

    @Test func aRequestBlockedOtherwiseAtItsDateIsNotWaitedFor() {
        var state = Self.state(probed: Conditions(externalPower: false))
        state.submitRequest(Self.refresh(Self.apps[0]), app: Self.apps[0], kind: .appRefresh, earliest: at(100), at: t0)
        state.submitRequest(ident("\(Self.apps[1]).clean"), app: Self.apps[1], kind: .processing, earliest: at(110), power: true, at: t0)
        #expect(state.dueLaunches(at: at(100)).map(\.app) == [Self.apps[0]])
    }

    @Test func simulatedLaunchesAndPushesAreNotHeld() throws {
        var state = Self.fiveApps()
        let result = state.run(.simulateLaunch(identifier: Self.refresh(Self.apps[4]), app: Self.apps[4]), at: at(100))
        #expect(result.outcome.error == nil)
        #expect(result.effects.contains { effect in
            if case .launch(let plan) = effect { return plan.app == Self.apps[4] && plan.simulated }
            return false
        }, "a simulated launch goes out at once, whatever the hold")
    }

    @Test func maxConcurrentLaunchesQueuesTheRestUntilEarlierOnesEnd() throws {
        var state = Self.fiveApps(maxConcurrent: 2)
        let first = state.launchDue(at: at(112))
        #expect(first.map(\.app) == [Self.apps[0], Self.apps[1]], "the earliest ready go first")
        let turn = state.launchTurn(at: at(112))
        #expect(turn.plans.isEmpty, "two launches run: the burst waits")
        for app in Self.apps[2...4] {
            #expect(turn.blockers[TaskKey(app: app, identifier: Self.refresh(app))] == [.launchLimit])
        }
        state.run(.complete(app: Self.apps[0], identifier: Self.refresh(Self.apps[0]), success: true), at: at(115))
        #expect(state.dueLaunches(at: at(115)).map(\.app) == [Self.apps[2]], "one ends, the next starts")
        #expect(state.nextWake(after: at(115)).map { $0 > at(115) } ?? true, "the queue waits on launches ending, not on time")
    }

    @Test func aSimulatedLaunchIsNotRefusedByTheLimitButCountsAgainstIt() throws {
        var state = Self.fiveApps(maxConcurrent: 1)
        for app in [Self.apps[3], Self.apps[4]] {
            let result = state.run(.simulateLaunch(identifier: Self.refresh(app), app: app), at: at(50))
            let plan = try #require(result.effects.compactMap { effect -> LaunchPlan? in
                if case .launch(let plan) = effect { return plan }
                return nil
            }.first, "simulated past the limit")
            state.recordLaunch(plan, pid: app == Self.apps[3] ? 700 : 701, processGroup: 700, processStartTicks: 1, now: at(50))
        }
        let turn = state.launchTurn(at: at(112))
        #expect(turn.plans.isEmpty, "the simulated launches fill the one slot")
        #expect(turn.blockers[TaskKey(app: Self.apps[0], identifier: Self.refresh(Self.apps[0]))] == [.launchLimit])
    }

    @Test func aHandOverTakesNoSlot() throws {
        var state = Self.fiveApps(maxConcurrent: 1)
        // App 1's person-started process is attached with a handler for its refresh.
        let attach = state.run(.attach(app: Self.apps[0], pid: 4242, identifiers: [Self.refresh(Self.apps[0])]), at: at(1))
        #expect(attach.outcome.succeeded)
        let first = state.launchDue(at: at(112))
        #expect(first.map(\.app) == [Self.apps[0], Self.apps[1]], "the hand-over and one new process")
        #expect(first[0].handOver?.pid == 4242)
        #expect(first[1].handOver == nil)
        let turn = state.launchTurn(at: at(112))
        #expect(turn.plans.isEmpty, "one launched process fills the one slot")
        #expect(turn.blockers[TaskKey(app: Self.apps[2], identifier: Self.refresh(Self.apps[2]))] == [.launchLimit])
    }

    @Test func aZeroWindowLaunchesEachAtItsDate() {
        let state = Self.fiveApps(window: 0)
        #expect(state.dueLaunches(at: at(100)).map(\.app) == [Self.apps[0]])
    }
}
