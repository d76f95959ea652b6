import Foundation
import TaskState
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// ``AppLogRotation`` on real files: the chain moves up, the oldest beyond the count goes, and
/// nothing that is not a regular file is renamed or followed.
@Suite("App log rotation")
struct AppLogRotationTests {
    private func folder() throws -> String {
        let path = NSTemporaryDirectory() + "rotation-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private func write(_ text: String, _ path: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    private func read(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func underTheCapNothingHappensAtTheCapTheChainMovesUp() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let log = dir + "/a.log"
        #expect(AppLogRotation.rotate(log, maximumBytes: 4, kept: 2) == .notNeeded, "no log yet")
        try write("abc", log)
        #expect(AppLogRotation.rotate(log, maximumBytes: 4, kept: 2) == .notNeeded)
        try write("run1", log)
        #expect(AppLogRotation.rotate(log, maximumBytes: 4, kept: 2) == .rotated(removed: nil))
        try write("run2", log)
        #expect(AppLogRotation.rotate(log, maximumBytes: 4, kept: 2) == .rotated(removed: nil))
        try write("run3", log)
        #expect(AppLogRotation.rotate(log, maximumBytes: 4, kept: 2) == .rotated(removed: log + ".2"))
        #expect(read(log) == nil)
        #expect(read(log + ".1") == "run3")
        #expect(read(log + ".2") == "run2")
        #expect(read(log + ".3") == nil)
    }

    @Test func aLinkOrAFIFOIsNeverRenamedNorFollowed() throws {
        let dir = try folder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let target = dir + "/elsewhere"
        try write(String(repeating: "x", count: 100), target)
        let log = dir + "/a.log"
        #expect(symlink(target, log) == 0)
        guard case .failed(let reason) = AppLogRotation.rotate(log, maximumBytes: 4, kept: 1) else {
            Issue.record("a link was rotated")
            return
        }
        #expect(reason == "\(log) is not a regular file; it is not rotated")
        #expect(read(target)?.count == 100 && FileManager.default.fileExists(atPath: log))
        #expect(unlink(log) == 0 && mkfifo(log, 0o600) == 0)
        #expect(AppLogRotation.rotate(log, maximumBytes: 4, kept: 1) != .notNeeded)
        #expect(!FileManager.default.fileExists(atPath: log + ".1"))
    }
}
