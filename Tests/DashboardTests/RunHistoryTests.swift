import Dashboard
import Foundation
import Testing
import TaskState

/// The timeline's model: runs as intervals and throttled stretches, built event by event.
@Suite struct RunHistoryTests {
    static let app = "com.example.weather"
    static let task = "com.example.weather.refresh"
    static var key: TaskKey { TaskKey(app: Fixtures.id(app), identifier: Fixtures.id(task)) }

    /// An event about the test's task at `offset` seconds from the fixtures' clock.
    static func event(_ offset: TimeInterval, _ type: Event.Kind, identifier: String? = task, reason: String? = nil,
                      kind: TaskKind? = .appRefresh) -> Event {
        Event(time: Fixtures.at(offset), type: type, app: Fixtures.id(app), identifier: identifier.map(Fixtures.id), kind: kind,
              pid: 4100, reason: reason, message: "\(type.rawValue)")
    }

    static func history(_ events: [Event], throttleDelay: @escaping @Sendable (Int) -> TimeInterval = { 60 * pow(2, Double($0 - 1)) })
        -> RunHistory {
        var history = RunHistory(throttleDelay: throttleDelay)
        for event in events { history.apply(event) }
        return history
    }

    /// The one run of the test's app.
    static func onlyRun(_ events: [Event]) throws -> HistoryRun {
        let runs = history(events).runs(of: Fixtures.id(app))
        try #require(runs.count == 1, "runs: \(Array(runs))")
        return runs.first!
    }

    @Test(arguments: [
        ([event(-300, .launched, reason: "appRefresh"), event(-280, .completed, reason: "success")], HistoryRun.Outcome.completed),
        ([event(-300, .launched, reason: "appRefresh"), event(-280, .completed, reason: "failure")], .failed),
        ([event(-300, .launched, reason: "appRefresh"), event(-280, .exited, reason: "exited with status 1")], .failed),
        ([event(-300, .launched, reason: "appRefresh"), event(-270, .expired, reason: "SIGUSR1"),
          event(-280 + 12, .completed, reason: "success")], .expired),
        ([event(-300, .launched, reason: "appRefresh"), event(-270, .expired, reason: "SIGUSR1"),
          event(-268, .exited, reason: "was killed by signal 10")], .expired),
        ([event(-300, .launched, reason: "appRefresh"), event(-270, .expired, reason: "SIGUSR1"),
          event(-268, .killed, reason: "overran")], .killed),
    ])
    func aRunEndsAsItsLastEventSays(_ events: [Event], _ outcome: HistoryRun.Outcome) throws {
        let run = try Self.onlyRun(events)
        #expect(run.outcome == outcome)
        #expect(run.start == Fixtures.at(-300) && run.startLogged)
        #expect(run.end == events.last!.time)
        #expect(run.origin == .scheduler)
        #expect(Self.history(events).openRun(Self.key) == nil)
    }

    @Test func aRunStillGoingIsOpen() throws {
        let history = Self.history([Self.event(-30, .launched, reason: "simulated"), Self.event(-10, .expired, reason: "SIGUSR1")])
        let run = try #require(history.openRun(Self.key))
        #expect(run.isOpen && run.outcome == nil && run.expired)
        #expect(run.origin == .simulated)
        #expect(run.lastSeen == Fixtures.at(-10))
    }

    @Test func aLaunchThatFailedIsAFailedInstant() throws {
        let run = try Self.onlyRun([Self.event(-30, .launchFailed, reason: "appRefresh")])
        #expect(run.outcome == .failed && run.start == run.end)
    }

    @Test(arguments: [("appRefresh", TaskKind.appRefresh, HistoryRun.Origin.scheduler), ("processing", .processing, .scheduler),
                      ("urlSession", .urlSession, .scheduler), ("simulated", .appRefresh, .simulated),
                      ("finishing", .finishing, .app), ("remoteNotification", .remoteNotification, .push)])
    func theLaunchReasonSaysWhoStartedIt(_ reason: String, _ kind: TaskKind, _ origin: HistoryRun.Origin) throws {
        let type: Event.Kind = kind == .remoteNotification ? .pushDelivered : .launched
        #expect(try Self.onlyRun([Self.event(0, type, reason: reason, kind: kind)]).origin == origin)
    }

    @Test func aRunAdoptedAfterARestartGoesOnFromItsLaunch() throws {
        let history = Self.history([Self.event(-600, .launched, reason: "processing"), Self.event(-300, .adopted),
                                    Self.event(-100, .completed, reason: "success")])
        let run = try #require(history.runs(of: Fixtures.id(Self.app)).first)
        #expect(history.runs(of: Fixtures.id(Self.app)).count == 1)
        #expect(run.adopted && run.start == Fixtures.at(-600) && run.end == Fixtures.at(-100) && run.outcome == .completed)
    }

    @Test func aRunAdoptedWithoutItsLaunchStartsAtTheAdoption() throws {
        let history = Self.history([Self.event(-300, .adopted)])
        let run = try #require(history.openRun(Self.key))
        #expect(run.adopted && !run.startLogged && run.start == Fixtures.at(-300))
    }

    @Test func aRunInterruptedByARestartIsLostThere() throws {
        let run = try Self.onlyRun([Self.event(-600, .launched, reason: "appRefresh"), Self.event(-300, .interrupted)])
        #expect(run.outcome == .lost && run.end == Fixtures.at(-300))
    }

    @Test func aRelaunchWithNoEndLoggedLeavesTheFirstRunLost() {
        let history = Self.history([Self.event(-600, .launched, reason: "appRefresh"), Self.event(-300, .launched, reason: "appRefresh")])
        let runs = Array(history.runs(of: Fixtures.id(Self.app)))
        #expect(runs.map(\.outcome) == [.lost, nil])
        #expect(runs[0].end == Fixtures.at(-300) && history.openRun(Self.key)?.start == Fixtures.at(-300))
    }

    @Test func anEndLoggedBeforeItsLaunchEndsTheRunAtItsLaunch() throws {
        // The clock stepped back between the two events.
        let run = try Self.onlyRun([Self.event(-300, .launched, reason: "appRefresh"), Self.event(-400, .completed, reason: "success")])
        #expect(run.end == run.start && run.outcome == .completed)
    }

    @Test func anEndWithoutItsLaunchIsARunFromTheOldestEvent() throws {
        let other = Event(time: Fixtures.at(-900), type: .launched, app: Fixtures.id("com.example.mail"),
                          identifier: Fixtures.id("com.example.mail.refresh"), reason: "appRefresh", message: "launched")
        let history = Self.history([other, Self.event(-300, .killed, reason: "overran")])
        let run = try #require(history.runs(of: Fixtures.id(Self.app)).first)
        #expect(!run.startLogged && run.start == Fixtures.at(-900) && run.end == Fixtures.at(-300) && run.outcome == .killed)
    }

    @Test func eventsOfNoRunChangeNothing() {
        let history = Self.history([Self.event(-300, .submitted), Self.event(-200, .cancelled), Self.event(-100, .completed, identifier: nil)])
        #expect(history.lanes.isEmpty && history.appliedCount == 1)
    }

    @Test func aThrottleLastsTheDelayOfItsLevel() throws {
        let history = Self.history([Self.event(-500, .throttled, identifier: nil, reason: "level 2")])
        let stretch = try #require(history.lanes[Fixtures.id(Self.app)]?.throttles.first)
        #expect(stretch.start == Fixtures.at(-500) && stretch.end == Fixtures.at(-500 + 120) && stretch.level == 2)
    }

    @Test func aCleanCompletionLiftsTheThrottle() throws {
        let history = Self.history([Self.event(-500, .throttled, identifier: nil, reason: "level 3"),
                                    Self.event(-460, .launched, reason: "simulated"), Self.event(-450, .completed, reason: "success")])
        #expect(history.lanes[Fixtures.id(Self.app)]?.throttles.first?.end == Fixtures.at(-450))
    }

    @Test func aLaterThrottleEndsTheEarlierOneAndAPushBudgetCutIsNoThrottle() throws {
        let history = Self.history([Self.event(-500, .throttled, identifier: nil, reason: "level 3"),
                                    Self.event(-400, .throttled, identifier: nil, reason: "pushBudget"),
                                    Self.event(-300, .throttled, identifier: nil, reason: "level 4")])
        let stretches = try #require(history.lanes[Fixtures.id(Self.app)]?.throttles)
        #expect(stretches.map(\.start) == [Fixtures.at(-500), Fixtures.at(-300)])
        #expect(stretches.map(\.end) == [Fixtures.at(-300), Fixtures.at(-300 + 480)])
    }

    @Test func runsOlderThanTheRetentionAreDropped() {
        var history = RunHistory(retention: 3600)
        history.apply(Self.event(-7200, .launched, reason: "appRefresh"))
        history.apply(Self.event(-7100, .completed, reason: "success"))
        history.apply(Self.event(-4000, .launched, reason: "appRefresh"))
        #expect(history.runs(of: Fixtures.id(Self.app)).count == 2)
        history.apply(Self.event(0, .completed, reason: "success"))
        #expect(history.runs(of: Fixtures.id(Self.app)).map(\.start) == [Fixtures.at(-4000)])
    }

    @Test func anOpenRunOutlivesTheRetentionAndAnAppThatLogsNothingMoreAgesOut() {
        var history = RunHistory(retention: 3600)
        let quiet = Event(time: Fixtures.at(-7000), type: .launched, app: Fixtures.id("com.example.quiet"),
                          identifier: Fixtures.id("com.example.quiet.refresh"), reason: "appRefresh", message: "launched")
        history.apply(quiet)
        history.apply(Event(time: Fixtures.at(-6990), type: .completed, app: quiet.app, identifier: quiet.identifier,
                            reason: "success", message: "completed"))
        history.apply(Self.event(-7200, .launched, reason: "processing", kind: .processing))
        for index in 0..<RunHistory.sweepInterval {
            history.apply(Event(time: Fixtures.at(Double(index)), type: .launchFailed, app: Fixtures.id("com.example.busy"),
                                identifier: Fixtures.id("com.example.busy.refresh"), reason: "appRefresh", message: "failed"))
        }
        #expect(history.openRun(Self.key)?.start == Fixtures.at(-7200), "still open, still kept")
        #expect(history.lanes[Fixtures.id("com.example.quiet")] == nil, "its one run ended over an hour before the newest event")
    }

    /// Memory stays bounded however many events come; other apps' lanes keep their runs.
    @Test func aLongLogKeepsAtMostTheNewestRunsPerApp() throws {
        var history = RunHistory(maximumRunsPerApp: 100)
        history.apply(Event(time: Fixtures.at(-10_000), type: .launched, app: Fixtures.id("com.example.long"),
                            identifier: Fixtures.id("com.example.long.job"), reason: "processing", message: "launched"))
        for index in 0..<5_000 {
            let time = Double(index) - 9_000
            history.apply(Self.event(time, .launched, reason: "appRefresh"))
            history.apply(Self.event(time + 0.5, .completed, reason: "success"))
        }
        let runs = history.runs(of: Fixtures.id(Self.app))
        #expect(runs.count == 100)
        #expect(runs.last?.start == Fixtures.at(4_999 - 9_000))
        #expect(history.openRun(TaskKey(app: Fixtures.id("com.example.long"), identifier: Fixtures.id("com.example.long.job"))) != nil)
        #expect(history.appliedCount == 10_001)
    }

    /// Raw log lines give the same history as their events, and lines of other types are skipped
    /// before decoding.
    @Test func logLinesGiveTheSameHistory() throws {
        let events = [Self.event(-600, .submitted), Self.event(-500, .launched, reason: "appRefresh"),
                      Self.event(-490, .expired, reason: "SIGUSR1"), Self.event(-480, .killed, reason: "overran"),
                      Self.event(-480, .throttled, identifier: nil, reason: "level 1"), Self.event(-100, .launched, reason: "simulated")]
        var lines = Data()
        for event in events { lines.append(try JSONFormat.encodeLine(event)) }
        lines.append(Data("not json\n".utf8))
        var fromLines = RunHistory(throttleDelay: { _ in 60 })
        fromLines.apply(lines: lines)
        let fromEvents = Self.history(events, throttleDelay: { _ in 60 })
        #expect(Array(fromLines.runs(of: Fixtures.id(Self.app))) == Array(fromEvents.runs(of: Fixtures.id(Self.app))))
        #expect(fromLines.lanes[Fixtures.id(Self.app)]?.throttles == fromEvents.lanes[Fixtures.id(Self.app)]?.throttles)
        #expect(fromLines.appliedCount == 5, "the submitted line is skipped")
    }
}
