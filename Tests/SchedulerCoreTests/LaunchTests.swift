import Foundation
import Testing
import SchedulerCore
import TaskState

@Suite("Due launches and launch recording")
struct LaunchTests {
    @Test func earliestBeginDateIsAFloorNeverEarlier() throws {
        var state = makeState()
        let earliest = at(2 * day + 17)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: earliest, at: t0)
        // Look every simulated quarter hour for two days: nothing is due.
        var now = t0
        while now < earliest {
            #expect(state.dueLaunches(at: now).isEmpty, "launched early at \(now)")
            now = now.addingTimeInterval(15 * 60)
        }
        #expect(state.nextWake(after: t0) == earliest)
        #expect(state.dueLaunches(at: earliest.addingTimeInterval(-0.001)).isEmpty)
        let plans = state.dueLaunches(at: earliest)
        let plan = try #require(plans.first)
        #expect(plans.count == 1)
        #expect(plan.app == Apps.news)
        #expect(plan.requests.map(\.identifier) == [Tasks.refresh])
        #expect(plan.reason == "appRefresh")
        #expect(!plan.simulated)
        #expect(plan.manifest.id == Apps.news)
        #expect(state.dueLaunches(at: earliest.addingTimeInterval(hour)).count == 1, "still due later")
    }

    @Test func aRecurringRefreshOverAWeekNeverRunsEarly() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(hour), at: t0)
        var now = t0
        var launches: [Date] = []
        var pid: Int32 = 100
        while now < at(7 * day) {
            let wake = try #require(state.nextWake(after: now), "something always waits on time")
            #expect(wake > now)
            guard wake < at(7 * day) else { break }
            now = wake
            #expect(state.expire(at: now).isEmpty, "the handler always completes in time")
            for plan in state.dueLaunches(at: now) {
                let request = try #require(plan.requests.first)
                let earliest = try #require(request.earliestBeginDate)
                #expect(now >= earliest, "launched before its earliest begin date")
                pid += 1
                state.recordLaunch(plan, pid: pid, processGroup: pid, processStartTicks: nil, now: now)
                launches.append(now)
                // The handler schedules the next refresh an hour on, then completes 3 s later.
                let finished = now.addingTimeInterval(3)
                state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: finished.addingTimeInterval(hour), at: finished)
                #expect(state.run(.complete(app: Apps.news, identifier: Tasks.refresh, success: true), at: finished).outcome.succeeded)
                now = finished
            }
        }
        #expect(launches.count == 7 * 24 - 1)
        #expect(launches.first == at(hour))
        for (earlier, later) in zip(launches, launches.dropFirst()) {
            #expect(later.timeIntervalSince(earlier) == hour + 3)
        }
        #expect(state.apps[Apps.news]?.launchCount == launches.count)
        #expect(state.apps[Apps.news]?.lastLaunchAt == launches.last)
    }

    @Test func requestsOfOneAppDueWithinTheWindowGoOutInOneLaunch() throws {
        var state = makeState() // window 60 s
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(100), at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(150), at: t0)
        #expect(state.dueLaunches(at: at(100)).isEmpty, "waits for the backup due 50 s later")
        #expect(state.nextWake(after: at(100)) == at(150))
        #expect(state.dueLaunches(at: at(120)).isEmpty)
        let plans = state.dueLaunches(at: at(150))
        #expect(plans.count == 1)
        let plan = try #require(plans.first)
        #expect(plan.requests.map(\.identifier) == [Tasks.cleanup, Tasks.backup], "oldest first")
        #expect(plan.reason == "processing")

        state.recordLaunch(plan, pid: 77, processGroup: 77, processStartTicks: 5, now: at(150))
        #expect(state.requests.isEmpty)
        #expect(state.tasks.values.map(\.launchID) == [plan.launchID, plan.launchID])
        #expect(state.apps[Apps.news]?.launchCount == 1, "one wake-up for two tasks")
    }

    @Test func theWindowIsMeasuredFromTheFirstReadyRequestAndIsInclusive() {
        var state = makeState()
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(100), at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(160), at: t0)
        #expect(state.dueLaunches(at: at(100)).isEmpty)
        #expect(state.dueLaunches(at: at(160)).first?.requests.count == 2)
    }

    @Test func aLaunchDoesNotWaitLongerThanTheWindow() throws {
        var settings = SchedulerSettings()
        settings.coalescingWindowSeconds = 60
        var state = makeState(settings: settings)
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(100), at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(161), at: t0)
        let plans = state.dueLaunches(at: at(100))
        #expect(plans.first?.requests.map(\.identifier) == [Tasks.cleanup])
        state.launchDue(at: at(100))
        #expect(state.request(Tasks.backup) != nil)
        #expect(state.nextWake(after: at(100)) == at(161))

        // A chain of requests is not followed beyond the window of the first.
        var chain = makeState(settings: settings)
        chain.submitRequest(Tasks.processing(0), kind: .processing, earliest: at(100), at: t0)
        chain.submitRequest(Tasks.processing(1), kind: .processing, earliest: at(150), at: t0)
        chain.submitRequest(Tasks.processing(2), kind: .processing, earliest: at(200), at: t0)
        #expect(chain.dueLaunches(at: at(100)).isEmpty)
        let plan = try #require(chain.dueLaunches(at: at(150)).first)
        #expect(plan.requests.map(\.identifier) == [Tasks.processing(0), Tasks.processing(1)])
    }

    @Test func aLateWakeStillLaunchesEverythingDue() {
        var state = makeState()
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(100), at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(130), at: t0)
        #expect(state.dueLaunches(at: at(1000)).first?.requests.count == 2)
    }

    @Test func noCoalescingWithAZeroWindow() {
        var settings = SchedulerSettings()
        settings.coalescingWindowSeconds = 0
        var state = makeState(settings: settings)
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(100), at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(101), at: t0)
        #expect(state.dueLaunches(at: at(100)).first?.requests.map(\.identifier) == [Tasks.cleanup])

        var twoApps = makeState(settings: settings)
        twoApps.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: at(100), at: t0)
        twoApps.submitRequest(ident("com.example.mail.refresh"), app: Apps.mail, kind: .appRefresh, earliest: at(101), at: t0)
        #expect(twoApps.dueLaunches(at: at(100)).map(\.app) == [Apps.news], "nor across apps")
    }

    @Test func aSoonRequestThatIsAlsoBlockedOtherwiseIsNotWaitedFor() {
        var state = makeState(probed: Conditions(externalPower: false))
        state.submitRequest(Tasks.cleanup, kind: .processing, earliest: at(100), at: t0)
        state.submitRequest(Tasks.backup, kind: .processing, earliest: at(130), power: true, at: t0)
        #expect(state.dueLaunches(at: at(100)).first?.requests.map(\.identifier) == [Tasks.cleanup])
    }

    @Test func oneLaunchPerAppSortedByApp() {
        var state = makeState()
        state.submitRequest(ident("com.example.mail.refresh"), app: Apps.mail, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: at(1))
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        let plans = state.dueLaunches(at: at(2))
        #expect(plans.map(\.app) == [Apps.mail, Apps.news])
        #expect(plans.last?.requests.map(\.identifier) == [Tasks.cleanup, Tasks.refresh])
        #expect(plans.last?.reason == "processing", "the reason is the first request's kind")
        #expect(Set(plans.map(\.launchID)).count == 2)
    }

    @Test func recordLaunchConsumesRequestsAndStartsBudgets() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.cleanup, kind: .processing, at: t0)
        _ = state.takeChanges()
        let plan = try #require(state.dueLaunches(at: at(10)).first)
        state.recordLaunch(plan, pid: 4321, processGroup: 4321, processStartTicks: 99, now: at(10))

        #expect(state.requests.isEmpty, "a launched request is consumed")
        let refresh = try #require(state.task(Tasks.refresh))
        #expect(refresh.deadline == at(40))
        #expect(refresh.state == .running && refresh.startedAt == at(10))
        #expect(refresh.pid == 4321 && refresh.processGroup == 4321 && refresh.processStartTicks == 99)
        #expect(refresh.launchReason == plan.reason && !refresh.simulated)
        #expect(refresh.expirationSignal == "SIGUSR1")
        #expect(refresh.launchID == plan.launchID)
        let cleanup = try #require(state.task(Tasks.cleanup))
        #expect(cleanup.deadline == at(610))
        #expect(cleanup.kind == .processing)
        #expect(state.watchedPIDs == [4321])
        #expect(state.apps[Apps.news]?.launchCount == 1)
        #expect(state.apps[Apps.news]?.lastLaunchAt == at(10))

        let changes = state.takeChanges()
        let keys: Set = [state.key(Tasks.refresh), state.key(Tasks.cleanup)]
        #expect(changes.requests == keys)
        #expect(changes.tasks == keys)
        #expect(changes.apps == [Apps.news])
        #expect(changes.eventTypes == [.launched, .launched])
        #expect(changes.events.allSatisfy { $0.pid == 4321 })
        #expect(state.dueLaunches(at: at(11)).isEmpty)
    }

    @Test func budgetsComeFromTheSettingsAndTheSignalFromTheManifest() throws {
        var settings = SchedulerSettings()
        settings.appRefreshBudgetSeconds = 12
        settings.processingBudgetSeconds = 45
        var state = makeState(settings: settings)
        state.submitRequest(ident("com.example.mail.refresh"), app: Apps.mail, kind: .appRefresh, at: t0)
        state.submitRequest(Tasks.shared, app: Apps.mail, kind: .processing, at: t0)
        state.launchDue(at: t0)
        let refresh = try #require(state.task(ident("com.example.mail.refresh"), app: Apps.mail))
        #expect(refresh.deadline == at(12))
        #expect(refresh.expirationSignal == "SIGTERM")
        #expect(state.task(Tasks.shared, app: Apps.mail)?.deadline == at(45))
    }

    @Test func aFailedLaunchConsumesTheRequestsAndIsLogged() throws {
        var state = makeState()
        state.submitRequest(Tasks.refresh, kind: .appRefresh, at: t0)
        let plan = try #require(state.dueLaunches(at: t0).first)
        _ = state.takeChanges()
        state.recordLaunchFailure(plan, reason: "exec format error", now: t0)
        #expect(state.requests.isEmpty && state.tasks.isEmpty)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.launchFailed])
        #expect(changes.events.first?.message == "com.example.news: could not launch /bin/true: exec format error")
        #expect(changes.requests == [state.key(Tasks.refresh)])
    }
}
