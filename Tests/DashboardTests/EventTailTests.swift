import StateFeed
import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The dashboard's event log reader reads only what was appended, through rotation and truncation.
@Suite struct EventTailTests {
    /// A private state directory with a writer that appends events the way the scheduler does.
    final class Log {
        let root: String
        let paths: StatePaths
        private var count = 0

        init() throws {
            root = FileManager.default.temporaryDirectory.path + "/bgtop-eventtail-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            paths = StatePaths(root: root)
        }

        deinit { try? FileManager.default.removeItem(atPath: root) }

        /// Appends `n` events numbered on from the last; returns the last number.
        @discardableResult
        func append(_ n: Int) throws -> Int {
            var lines = Data()
            for _ in 0..<n {
                count += 1
                lines.append(try JSONFormat.encodeLine(Event(time: Date(timeIntervalSince1970: Double(count)), type: .submitted,
                                                              message: "event \(count)")))
            }
            try EventLog(paths: paths).append(lines)
            return count
        }

        func appendRaw(_ text: String) throws {
            try EventLog(paths: paths).append(Data(text.utf8))
        }
    }

    private func numbers(_ tail: EventTail) -> [Int] {
        tail.events.compactMap { Int($0.message.dropFirst("event ".count)) }
    }

    @Test func startsWithTheNewestAndAddsOnlyWhatIsAppended() throws {
        let log = try Log()
        try log.append(30)
        let tail = EventTail(paths: log.paths, limit: 10)
        #expect(numbers(tail) == Array(21...30))
        #expect(tail.update() == false, "nothing appended")
        try log.append(3)
        #expect(tail.update())
        #expect(numbers(tail) == Array(24...33))
    }

    @Test func aLineIsTakenOnlyWhenItIsComplete() throws {
        let log = try Log()
        try log.append(2)
        let tail = EventTail(paths: log.paths, limit: 10)
        let line = String(decoding: try JSONFormat.encodeLine(Event(time: Date(timeIntervalSince1970: 3), type: .submitted,
                                                                     message: "event 3")), as: UTF8.self)
        let cut = line.index(line.startIndex, offsetBy: 20)
        try log.appendRaw(String(line[..<cut]))
        #expect(tail.update() == false)
        #expect(numbers(tail) == [1, 2])
        try log.appendRaw(String(line[cut...]))
        #expect(tail.update())
        #expect(numbers(tail) == [1, 2, 3])
    }

    @Test func rotationLosesNothing() throws {
        let log = try Log()
        try log.append(5)
        let tail = EventTail(paths: log.paths, limit: 100)
        // Appended, then rotated before the tail looked, then appended to the new file.
        try log.append(2)
        try EventLog(paths: log.paths).rotateIfNeeded(maximumBytes: 1, keep: 3)
        try log.append(2)
        #expect(tail.update())
        #expect(numbers(tail) == Array(1...9))
        // A fresh tail finds the older events in the rotated file.
        #expect(numbers(EventTail(paths: log.paths, limit: 6)) == Array(4...9))
    }

    @Test func aLogCutShortIsReadAgain() throws {
        let log = try Log()
        try log.append(4)
        let tail = EventTail(paths: log.paths, limit: 10)
        try EventLog(paths: log.paths).truncate(to: 0)
        try log.append(1)
        #expect(tail.update())
        #expect(numbers(tail) == [5])
    }

    @Test func aLogThatAppearsLaterIsFollowed() throws {
        let log = try Log()
        let tail = EventTail(paths: log.paths, limit: 10)
        #expect(tail.events.isEmpty)
        try log.append(2)
        #expect(tail.update())
        #expect(numbers(tail) == [1, 2])
    }
}
