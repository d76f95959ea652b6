import Foundation
import Testing
@testable import SchedulerRuntime
#if canImport(Glibc)
import Glibc
#endif

/// The poison-command guard's marker on a real file: never cut during a run, so what is in hand
/// ends at a zero byte, with a longer marker's bytes behind it, and the crash line comes last.
@Suite struct PoisonGuardTests {
    private func withGuard(_ body: (PoisonGuard) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.path + "/bgtop-poison-\(UUID().uuidString.prefix(8))"
        #expect(mkdir(root, 0o700) == 0)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try body(try PoisonGuard(root: root))
    }

    /// What the signal handler does: one `write` at the end of the file (`O_APPEND`).
    private func appendCrashLine(_ signal: Int32, to path: String) {
        let fd = open(path, O_WRONLY | O_APPEND)
        let line = Array("crashed signal \(signal)\n".utf8)
        #expect(write(fd, line, line.count) == line.count)
        close(fd)
    }

    private func size(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : -1
    }

    @Test func aShorterMarkHidesTheLongerOneBehindIt() throws {
        try withGuard { guard_ in
            guard_.mark(.committing, commands: ["a.json", "b.json", "c.json", "socket:d"])
            let long = size(guard_.path)
            guard_.mark(.applying, commands: ["e.json"])
            #expect(size(guard_.path) == long, "the file keeps its size")
            #expect(guard_.leftover() == .init(phase: .applying, commands: ["e.json"], signal: nil))
            appendCrashLine(11, to: guard_.path)
            #expect(guard_.leftover() == .init(phase: .applying, commands: ["e.json"], signal: 11))
        }
    }

    @Test func aClearedMarkerHoldsNothingEvenWithACrashLine() throws {
        try withGuard { guard_ in
            guard_.mark(.committing, commands: ["a.json", "b.json"])
            guard_.clear()
            #expect(guard_.leftover() == nil)
            appendCrashLine(6, to: guard_.path)
            #expect(guard_.leftover() == nil, "a crash with nothing in hand blames no command")
        }
    }

    /// Start-up cuts the file, so no crash line of a run before can follow this run's zero bytes.
    @Test func resetLeavesAnEmptyFile() throws {
        try withGuard { guard_ in
            guard_.mark(.applying, commands: ["a.json"])
            appendCrashLine(4, to: guard_.path)
            guard_.reset()
            #expect(size(guard_.path) == 0)
            guard_.mark(.applying, commands: ["b.json"])
            #expect(guard_.leftover() == .init(phase: .applying, commands: ["b.json"], signal: nil))
        }
    }

    /// A marker an older `bgtaskd` left (cut to its text, no zero byte) reads as before.
    @Test func aMarkerWithoutZeroBytesIsReadWhole() {
        #expect(PoisonGuard.parse("applying\nx.json\ncrashed signal 4\n") == .init(phase: .applying, commands: ["x.json"], signal: 4))
        #expect(PoisonGuard.parse("committing\nx.json\ny.json\n") == .init(phase: .committing, commands: ["x.json", "y.json"], signal: nil))
        #expect(PoisonGuard.parse("") == nil)
        #expect(PoisonGuard.parse("crashed signal 4\n") == nil)
    }
}
