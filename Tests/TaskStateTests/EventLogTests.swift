import Foundation
import Testing
import TaskState

@Suite("Event log")
struct EventLogTests {
    private func event(_ number: Int) -> Event {
        Event(time: referenceDate.addingTimeInterval(Double(number)), type: .submitted, app: ident("com.example.news"),
              identifier: ident("t\(number)"), kind: .appRefresh, pid: Int32(number), command: "c\(number)",
              reason: "r", message: "event number \(number)")
    }

    private func lines(_ numbers: Range<Int>) throws -> Data {
        var data = Data()
        for number in numbers { data.append(try JSONFormat.encodeLine(event(number))) }
        return data
    }

    @Test func appendReturnsThePreviousSizeAndEventsReadBack() throws {
        try withTemporaryDirectory { dir in
            let log = EventLog(paths: StatePaths(root: dir))
            let first = try lines(0..<3)
            #expect(try log.append(first) == 0)
            #expect(try log.append(try lines(3..<5)) == first.count)
            #expect(permissions("\(dir)/events.jsonl") == 0o600)
            let recent = log.recent(limit: 100)
            #expect(recent.events == (0..<5).map(event))
            #expect(recent.unreadable == 0)
            #expect(log.recent(limit: 2).events == [event(3), event(4)])
            #expect(log.recent(limit: 0).events == [])
        }
    }

    @Test func rotationShiftsFilesAndLosesNothing() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            let log = EventLog(paths: paths)
            let keep = 3
            // Four batches of ten events; rotate after each: events.1 is the newest rotated file.
            for batch in 0..<4 {
                try log.append(try lines(batch * 10..<batch * 10 + 10))
                try log.rotateIfNeeded(maximumBytes: 100, keep: keep)
                #expect(!StateFiles.exists(paths.events), "rotated away after batch \(batch)")
            }
            #expect(try StateFiles.names(in: dir) == ["events.1.jsonl", "events.2.jsonl", "events.3.jsonl"])
            #expect(EventLog.decodeLines(try StateFiles.read(paths.rotatedEvents(1))).events.first == event(30))
            #expect(EventLog.decodeLines(try StateFiles.read(paths.rotatedEvents(3))).events.first == event(10))

            try log.append(try lines(40..<45))
            let recent = log.recent(limit: 1000)
            #expect(recent.events == (10..<45).map(event), "all kept generations read oldest first")
            #expect(recent.unreadable == 0)
            #expect(log.recent(limit: 12).events == (33..<45).map(event), "the limit spans files")
        }
    }

    @Test func noRotationUnderTheLimit() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            let log = EventLog(paths: paths)
            try log.rotateIfNeeded(maximumBytes: 10, keep: 2) // no log at all: nothing to do
            let data = try lines(0..<2)
            try log.append(data)
            try log.rotateIfNeeded(maximumBytes: data.count + 1, keep: 2)
            #expect(try StateFiles.names(in: dir) == ["events.jsonl"])
            try log.rotateIfNeeded(maximumBytes: data.count, keep: 2)
            #expect(try StateFiles.names(in: dir) == ["events.1.jsonl"])
            #expect(log.recent(limit: 10).events == [event(0), event(1)])
        }
    }

    @Test func decodeLinesSkipsAPartialLastLineAndCountsGarbage() throws {
        var data = try lines(0..<2)
        let partial = try JSONFormat.encodeLine(event(2)).dropLast(9)
        data.append(partial)
        let decoded = EventLog.decodeLines(data)
        #expect(decoded.events == [event(0), event(1)])
        #expect(decoded.unreadable == 0, "a line still being written is not garbage")

        var withGarbage = try lines(0..<1)
        withGarbage.append(Data("not an event\n\n".utf8))
        withGarbage.append(try lines(1..<2))
        let mixed = EventLog.decodeLines(withGarbage)
        #expect(mixed.events == [event(0), event(1)])
        #expect(mixed.unreadable == 1)
        #expect(EventLog.decodeLines(Data()).events.isEmpty)
    }

    @Test func recentCountsUnreadableLinesInTheFile() throws {
        try withTemporaryDirectory { dir in
            let log = EventLog(paths: StatePaths(root: dir))
            try log.append(try lines(0..<1))
            try log.append(Data("{\"half\": \n".utf8))
            try log.append(try lines(1..<2))
            let recent = log.recent(limit: 10)
            #expect(recent.events == [event(0), event(1)])
            #expect(recent.unreadable == 1)
        }
    }

    @Test func truncateCutsBackToASize() throws {
        try withTemporaryDirectory { dir in
            let log = EventLog(paths: StatePaths(root: dir))
            let size = try log.append(try lines(0..<2))
            #expect(size == 0)
            let mark = try log.append(try lines(2..<4))
            try log.truncate(to: mark)
            #expect(log.recent(limit: 10).events == [event(0), event(1)])
            try log.truncate(to: mark + 1000) // larger than the file: unchanged
            #expect(StateFiles.size(of: "\(dir)/events.jsonl") == mark)
        }
    }
}
