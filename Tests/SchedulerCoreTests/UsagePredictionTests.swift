import Foundation
import Testing
import SchedulerCore
import TaskState

/// Usage prediction on an injected clock, in UTC: refreshes placed just before the user's habits.
@Suite("Usage prediction")
struct UsagePredictionTests {
    /// Monday 2026-11-02 00:00 UTC.
    static let monday0 = Date(timeIntervalSince1970: 1_793_577_600)
    static let refresh = ident("com.example.pusher.refresh")
    static let app = Apps.pusher

    /// `day` days (0 = Monday) of `week` after ``monday0``, at `hour`:`minute`.
    static func time(week: Int, day: Int, _ hour: Int, _ minute: Int = 0) -> Date {
        monday0.addingTimeInterval(Double(((week * 7 + day) * 24 + hour) * 3600 + minute * 60))
    }

    /// Weekday uses at `hour`:`minute` for weeks `weeks`.
    static func weekdayUses(weeks: Range<Int>, _ hour: Int, _ minute: Int) -> [Date] {
        weeks.flatMap { week in (0..<5).map { time(week: week, day: $0, hour, minute) } }
    }

    static func state(uses: [Date], at now: Date, settings: SchedulerSettings = SchedulerSettings()) -> SchedulerState {
        var state = makeState(settings: settings)
        state.timeZone = .utc
        let result = state.run(.appUsed(app: app, uses: uses), at: now)
        #expect(result.outcome.succeeded, "\(result.outcome)")
        return state
    }

    @Test func aWeekdayHabitAt0810GetsItsRefreshAt0800OnWeekdaysAndNotAtWeekends() throws {
        let weekStart = Self.time(week: 3, day: 0, 0)
        var state = Self.state(uses: Self.weekdayUses(weeks: 0..<3, 8, 10), at: weekStart)
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: weekStart)
        let request = try #require(state.request(Self.refresh, app: Self.app))
        #expect(state.blockers(for: request, at: weekStart) == [.predictedUse])
        let plan = try #require(state.usagePlan(for: request, at: weekStart))
        #expect(plan.launchAt == Self.time(week: 3, day: 0, 8, 0))
        #expect(plan.predictedUse?.date == Self.time(week: 3, day: 0, 8, 10))
        #expect(state.nextWake(after: weekStart) == plan.launchAt)
        #expect(state.dueLaunches(at: plan.launchAt.addingTimeInterval(-1)).isEmpty)
        let launches = state.launchDue(at: plan.launchAt)
        #expect(launches.count == 1)
        let launched = try #require(state.changes.events.last { $0.type == .launched })
        #expect(launched.message.contains("placed by usage prediction for a use expected at 08:10"), "\(launched.message)")

        // Saturday: no habit within a day, so the refresh runs as it always did.
        let saturday = Self.time(week: 3, day: 5, 0)
        state.run(.complete(app: Self.app, identifier: Self.refresh, success: true), at: plan.launchAt.addingTimeInterval(5))
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: saturday)
        let weekend = try #require(state.request(Self.refresh, app: Self.app))
        #expect(state.blockers(for: weekend, at: saturday).isEmpty)
    }

    @Test func aChangedHabitFadesAndTheNewOneTakesOver() throws {
        let now = Self.time(week: 14, day: 0, 0)
        let uses = Self.weekdayUses(weeks: 0..<8, 8, 10) + Self.weekdayUses(weeks: 8..<14, 19, 30)
        let state = Self.state(uses: uses, at: now)
        let model = try #require(state.usageModels[Self.app])
        #expect(model.likelihood(hourOfWeek: 8) < 0.5, "the old habit has faded: \(model.likelihood(hourOfWeek: 8))")
        #expect(model.likelihood(hourOfWeek: 19) >= 0.5, "the new habit counts: \(model.likelihood(hourOfWeek: 19))")
        let next = try #require(model.nextUse(after: now, within: 86_400, minimumConfidence: 0.5))
        #expect(next.date == Self.time(week: 14, day: 0, 19, 30))
    }

    @Test func anAppNotUsedForAWeekIsRefreshedAtMostOnceADay() throws {
        let now = Self.time(week: 5, day: 2, 12)
        var state = Self.state(uses: Self.weekdayUses(weeks: 0..<3, 8, 10), at: now)
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now)
        // Never launched yet: it goes at once.
        #expect(state.launchDue(at: now).count == 1)
        state.run(.complete(app: Self.app, identifier: Self.refresh, success: true), at: now.addingTimeInterval(2))
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now.addingTimeInterval(3))
        let request = try #require(state.request(Self.refresh, app: Self.app))
        #expect(state.blockers(for: request, at: now.addingTimeInterval(3)) == [.rarelyUsed])
        #expect(state.nextWake(after: now.addingTimeInterval(3)) == now.addingTimeInterval(86_400))
    }

    @Test func tooLittleConfidenceFallsBackToTheEarliestDate() throws {
        let now = Self.time(week: 8, day: 0, 0)
        // One Monday in four: a likelihood of about a quarter.
        let uses = [0, 4].map { Self.time(week: $0, day: 0, 8, 10) } + [Self.time(week: 7, day: 2, 13, 0)]
        var state = Self.state(uses: uses, at: now)
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now)
        let request = try #require(state.request(Self.refresh, app: Self.app))
        #expect(state.blockers(for: request, at: now).isEmpty)
    }

    @Test func predictionOffRestoresTodaysBehaviourAndSimulateLaunchIgnoresIt() throws {
        let now = Self.time(week: 3, day: 0, 0)
        var settings = SchedulerSettings()
        settings.usagePrediction = false
        var off = Self.state(uses: Self.weekdayUses(weeks: 0..<3, 8, 10), at: now, settings: settings)
        off.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now)
        #expect(off.dueLaunches(at: now).count == 1)

        var on = Self.state(uses: Self.weekdayUses(weeks: 0..<3, 8, 10), at: now)
        on.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now)
        #expect(on.dueLaunches(at: now).isEmpty)
        #expect(on.run(.simulateLaunch(identifier: Self.refresh, app: Self.app), at: now).launch != nil)
    }

    @Test func usesAreCheckedLikeEveryNumberInACommand() {
        let now = Self.time(week: 3, day: 0, 0)
        var state = makeState()
        let future = state.run(.appUsed(app: Self.app, uses: [now.addingTimeInterval(3600)]), at: now)
        #expect(future.errorName == "invalidCommand")
        #expect(future.errorMessage?.hasPrefix("bad uses[0]") == true, "\(future.errorMessage ?? "")")
        let ancient = state.run(.appUsed(app: Self.app, uses: [now.addingTimeInterval(-400 * 86_400)]), at: now)
        #expect(ancient.errorName == "invalidCommand")
        #expect(state.run(.appUsed(app: Apps.ghost, uses: [now]), at: now).errorName == "unknownApp")
        #expect(state.usage.isEmpty)
    }

    @Test func aPlanWhoseTimePassedWhileSomethingElseHeldTheRequestIsNotMadeAgain() throws {
        let weekStart = Self.time(week: 3, day: 0, 0)
        var state = Self.state(uses: Self.weekdayUses(weeks: 0..<3, 8, 10), at: weekStart)
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: weekStart)
        let request = try #require(state.request(Self.refresh, app: Self.app))
        // At 08:12 (the machine was asleep through 08:00), it goes at once, not tomorrow.
        let late = Self.time(week: 3, day: 0, 8, 12)
        #expect(state.blockers(for: request, at: late).isEmpty)
        #expect(state.dueLaunches(at: late).count == 1)
    }

    @Test func aBurstOfOpensInOneHourCountsOnceAndAFutureUseIsIgnored() throws {
        let now = Self.time(week: 3, day: 0, 0)
        // Ten opens within one Tuesday hour, once: not a weekly habit.
        let burst = (0..<10).map { Self.time(week: 2, day: 1, 9, $0 * 5) }
        let state = Self.state(uses: burst, at: now)
        let model = try #require(state.usageModels[Self.app])
        #expect(model.likelihood(hourOfWeek: 24 + 9) < 0.5, "\(model.likelihood(hourOfWeek: 24 + 9))")
        let history = UsageHistory(app: Self.app).adding([now.addingTimeInterval(3600), now], now: now)
        #expect(history.uses == [now], "a use from the future is dropped")
    }

    @Test func onlyRefreshLaunchesCountForARarelyUsedApp() throws {
        let now = Self.time(week: 5, day: 2, 12)
        var state = Self.state(uses: Self.weekdayUses(weeks: 0..<3, 8, 10), at: now)
        // A push launch an hour ago is no refresh.
        _ = PushRulesTests.deliver(state.run(PushRulesTests.push(), at: now.addingTimeInterval(-3600)).effects, in: &state, pid: 900,
                                   at: now.addingTimeInterval(-3600))
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now)
        let request = try #require(state.request(Self.refresh, app: Self.app))
        #expect(state.blockers(for: request, at: now).isEmpty)
    }

    @Test func anAppWithNoHabitIsRefreshedAboutAsOftenAsItIsUsed() throws {
        let now = Self.time(week: 2, day: 3, 12)
        // Four uses a day at scattered hours for two weeks: no hour reaches the threshold.
        let uses = (0..<14).flatMap { day in [9, 13, 17, 21].map { hour in
            Self.time(week: 0, day: day, (hour + day) % 24, 7) } }
        var state = Self.state(uses: uses, at: now)
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now)
        #expect(state.launchDue(at: now).count == 1, "never refreshed yet: at once")
        state.run(.complete(app: Self.app, identifier: Self.refresh, success: true), at: now.addingTimeInterval(1))
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: now.addingTimeInterval(2))
        let request = try #require(state.request(Self.refresh, app: Self.app))
        #expect(state.blockers(for: request, at: now.addingTimeInterval(2)) == [.usageRate])
        // Uses in the last 14 days (the half-life): a refresh twice per mean gap between them.
        let window = 14.0 * 86_400
        let recent = uses.filter { $0 >= now.addingTimeInterval(2 - window) }.count
        #expect(recent > 30)
        #expect(state.usagePlan(for: request, at: now.addingTimeInterval(2))?.launchAt == now.addingTimeInterval(window / Double(recent) / 2))
    }

    @Test func anAppWithUnderTwoWeeksOfHistoryRunsAsBefore() throws {
        let now = Self.time(week: 0, day: 3, 12)
        var state = Self.state(uses: [now.addingTimeInterval(-60)], at: now)
        for round in 0..<2 {
            let at = now.addingTimeInterval(Double(round) * 60)
            state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: at)
            #expect(state.launchDue(at: at).count == 1, "round \(round) runs at once")
            state.run(.complete(app: Self.app, identifier: Self.refresh, success: true), at: at.addingTimeInterval(1))
        }
    }

    @Test func aHabitThatWandersIsRefreshedBeforeItsEarlyUses() throws {
        let weekStart = Self.time(week: 3, day: 0, 0)
        // 08:00 and 08:20 on alternate days: mean 08:10, spread 10 minutes.
        let uses = (0..<3).flatMap { week in (0..<5).map { day in Self.time(week: week, day: day, 8, (week + day) % 2 == 0 ? 0 : 20) } }
        var state = Self.state(uses: uses, at: weekStart)
        state.submitRequest(Self.refresh, app: Self.app, kind: .appRefresh, at: weekStart)
        let request = try #require(state.request(Self.refresh, app: Self.app))
        let plan = try #require(state.usagePlan(for: request, at: weekStart))
        let spread = try #require(plan.predictedUse?.spread)
        #expect(spread > 0)
        let use = try #require(plan.predictedUse?.date)
        #expect(plan.launchAt == use.addingTimeInterval(-600 - spread))
        #expect(plan.launchAt < Self.time(week: 3, day: 0, 8, 0), "before the early uses")
    }

    @Test func theLargestUsesCommandFitsTheInbox() throws {
        let now = Self.time(week: 3, day: 0, 0)
        let uses = (0..<Int(NumericBounds.usesPerCommand.upperBound)).map { now.addingTimeInterval(-Double($0) * 61.123) }
        let command = Command(issuedAt: now, issuerPID: 4_194_304, action: .appUsed(app: ident(String(repeating: "a", count: 128)), uses: uses))
        #expect(try JSONFormat.encode(command).count < 64 << 10)
    }

    @Test func repeatedUsesAreKeptOnceAndTheHistoryIsBounded() {
        let now = Self.time(week: 3, day: 0, 0)
        let history = UsageHistory(app: Self.app).adding([now, now, now.addingTimeInterval(-60)], now: now)
        #expect(history.uses == [now.addingTimeInterval(-60), now])
        let many = (0..<5000).map { now.addingTimeInterval(-Double($0) * 60) }
        #expect(UsageHistory(app: Self.app).adding(many, now: now).uses.count == UsageHistory.maximumUses)
    }
}
