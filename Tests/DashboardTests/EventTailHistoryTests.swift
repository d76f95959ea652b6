import Dashboard
import Foundation
import StateFeed
import Testing
import TaskState

/// The event tail keeps the timeline's history over more than its `limit` events: the rotated
/// logs are read back at start, every appended line counts, and a log cut short rebuilds it.
@Suite struct EventTailHistoryTests {
    /// Runs of `app` at `minutesAgo` (launched, then completed a second later), as log lines.
    private func runs(_ app: String, minutesAgo: [Double]) throws -> Data {
        var lines = Data()
        for minutes in minutesAgo {
            let start = Date().addingTimeInterval(-minutes * 60)
            for (offset, type) in [(0.0, Event.Kind.launched), (1.0, .completed)] {
                lines.append(try JSONFormat.encodeLine(Event(
                    time: start.addingTimeInterval(offset), type: type, app: Fixtures.id(app), identifier: Fixtures.id("\(app).refresh"),
                    kind: .appRefresh, reason: type == .launched ? "appRefresh" : "success", message: "\(app) \(type.rawValue)")))
            }
            // Lines the history does not take, between the runs.
            lines.append(try JSONFormat.encodeLine(Event(time: start, type: .submitted, app: Fixtures.id(app), message: "filler")))
        }
        return lines
    }

    private func starts(_ tail: EventTail, _ app: String) -> Int { tail.history?.runs(of: Fixtures.id(app)).count ?? -1 }

    @Test func theRotatedLogsAreReadBackForTheHistoryOnly() throws {
        let log = try EventTailTests.Log()
        let events = EventLog(paths: log.paths)
        try events.append(try runs("com.example.old", minutesAgo: [300, 290, 280]))
        try events.rotateIfNeeded(maximumBytes: 1, keep: 4)
        try events.append(try runs("com.example.mid", minutesAgo: [120, 110]))
        try events.rotateIfNeeded(maximumBytes: 1, keep: 4)
        try events.append(try runs("com.example.new", minutesAgo: [5]))
        let tail = EventTail(paths: log.paths, limit: 4, history: RunHistory())
        #expect(tail.events.count == 4, "the events panel still gets only the newest")
        #expect(starts(tail, "com.example.old") == 3)
        #expect(starts(tail, "com.example.mid") == 2)
        #expect(starts(tail, "com.example.new") == 1)
        let run = try #require(tail.history?.runs(of: Fixtures.id("com.example.old")).first)
        #expect(run.outcome == .completed && run.startLogged)
        #expect(EventTail(paths: log.paths, limit: 4).history == nil, "no history unless asked for")
    }

    @Test func everyAppendedLineCountsNotOnlyTheNewest() throws {
        let log = try EventTailTests.Log()
        let tail = EventTail(paths: log.paths, limit: 3, history: RunHistory())
        #expect(tail.history?.lanes.isEmpty == true)
        try EventLog(paths: log.paths).append(try runs("com.example.burst", minutesAgo: (1...50).reversed().map { Double($0) / 10 }))
        #expect(tail.update())
        #expect(tail.events.count == 3)
        #expect(starts(tail, "com.example.burst") == 50)
        // A rotation between two reads loses nothing either.
        try EventLog(paths: log.paths).append(try runs("com.example.burst", minutesAgo: [0.05]))
        try EventLog(paths: log.paths).rotateIfNeeded(maximumBytes: 1, keep: 4)
        try EventLog(paths: log.paths).append(try runs("com.example.burst", minutesAgo: [0.01]))
        #expect(tail.update())
        #expect(starts(tail, "com.example.burst") == 52)
    }

    @Test func aLogCutShortRebuildsTheHistoryWithoutCountingTwice() throws {
        let log = try EventTailTests.Log()
        let events = EventLog(paths: log.paths)
        try events.append(try runs("com.example.kept", minutesAgo: [30]))
        try events.rotateIfNeeded(maximumBytes: 1, keep: 4)
        try events.append(try runs("com.example.replayed", minutesAgo: [20, 10]))
        let tail = EventTail(paths: log.paths, limit: 10, history: RunHistory())
        #expect(starts(tail, "com.example.replayed") == 2)
        // The scheduler replays its journal: the log is cut back and the same commit appended again.
        try events.truncate(to: 0)
        try events.append(try runs("com.example.replayed", minutesAgo: [10]))
        #expect(tail.update())
        #expect(starts(tail, "com.example.kept") == 1)
        #expect(starts(tail, "com.example.replayed") == 1)
    }
}
