import Dashboard
import Foundation
import Testing
import TaskState

/// Review of issue 15, item 4: the timeline's model does not trust event times over the clock.
@Suite struct RunHistoryClockTests {
    static let app = Fixtures.id(RunHistoryTests.app)
    static let year9999 = Date(timeIntervalSince1970: 253_402_300_000)

    static func history(_ events: [Event]) -> RunHistory {
        var history = RunHistory(clock: { Fixtures.at(0) })
        for event in events { history.apply(event) }
        return history
    }

    static func garbage(at time: Date) -> Event {
        Event(time: time, type: .launched, app: app, identifier: Fixtures.id("com.example.weather.garbage"), kind: .appRefresh,
              pid: 1, reason: "appRefresh", message: "garbage")
    }

    /// Without the clock, the line dated 9999 made the cutoff 9999 minus the retention: every
    /// closed run of the session was dropped.
    @Test func oneEventDatedInTheFutureKeepsTheClosedRuns() {
        let history = Self.history([
            RunHistoryTests.event(-300, .launched, reason: "appRefresh"), RunHistoryTests.event(-280, .completed, reason: "success"),
            Self.garbage(at: Self.year9999),
            RunHistoryTests.event(-200, .launched, reason: "appRefresh"), RunHistoryTests.event(-180, .completed, reason: "success"),
        ])
        let closed = history.runs(of: Self.app).filter { $0.identifier.rawValue == RunHistoryTests.task }
        #expect(closed.count == 2, "\(Array(history.runs(of: Self.app)))")
        #expect(history.newestEvent == Fixtures.at(-180), "the future line is not the newest")
    }

    /// A clock stepped back: events an hour and more ahead of now; the window is behind now.
    @Test func aClockSteppedBackAgesRunsOutBehindNowNotBehindTheLaterEvents() {
        var history = RunHistory(retention: 600, clock: { Fixtures.at(0) })
        history.apply(RunHistoryTests.event(-500, .launched, reason: "appRefresh"))
        history.apply(RunHistoryTests.event(-490, .completed, reason: "success"))
        history.apply(RunHistoryTests.event(1000, .launched, reason: "appRefresh")) // within the tolerance, ahead of now
        #expect(history.runs(of: Self.app).count == 2, "a run 490 s old is inside a 600 s window behind now")
    }

    /// An end without its launch starts within the window, not at an ancient-dated line.
    @Test func anAncientLineDoesNotMakeAnUnloggedRunDaysLong() throws {
        let history = Self.history([
            Self.garbage(at: Date(timeIntervalSince1970: 0)),
            RunHistoryTests.event(-100, .completed, reason: "success"),
        ])
        let run = try #require(history.runs(of: Self.app).first { $0.identifier.rawValue == RunHistoryTests.task })
        #expect(!run.startLogged)
        #expect(run.start >= Fixtures.at(-100).addingTimeInterval(-history.retention), "started at \(run.start)")
        #expect(run.end == Fixtures.at(-100))
    }
}
