import Foundation
import Testing
@testable import SchedulerRuntime
import TaskState

/// Quarantine moves only what lies inside the state directory through real directories.
@Suite struct QuarantineTests {
    private func withFolders(_ body: (_ root: String, _ outside: String) throws -> Void) throws {
        let base = FileManager.default.temporaryDirectory.path + "/bgtop-quarantine-\(UUID().uuidString.prefix(8))"
        #expect(mkdir(base, 0o700) == 0)
        defer { try? FileManager.default.removeItem(atPath: base) }
        #expect(mkdir(base + "/state", 0o700) == 0)
        #expect(mkdir(base + "/outside", 0o700) == 0)
        try body(base + "/state", base + "/outside")
    }

    @Test func aFileInARealFolderIsMovedWithItsReason() throws {
        try withFolders { root, _ in
            #expect(mkdir(root + "/requests", 0o700) == 0)
            try Data("{".utf8).write(to: URL(fileURLWithPath: root + "/requests/x.json"))
            let moved = try Quarantine(paths: StatePaths(root: root)).isolate(root + "/requests/x.json", reason: "unreadable", now: Date())
            #expect(FileManager.default.fileExists(atPath: moved))
            #expect(!FileManager.default.fileExists(atPath: root + "/requests/x.json"))
            #expect(moved.hasSuffix("-requests__x.json"))
            #expect(try String(contentsOfFile: moved + ".reason", encoding: .utf8) == "requests/x.json: unreadable\n")
        }
    }

    /// A `/` followed by a combining mark is one `Character` with it: split as text, the symbolic
    /// link `a` on the way would be taken for part of a name and never looked at.
    @Test func aPathThroughALinkIsRefusedEvenBehindACombiningMark() throws {
        try withFolders { root, outside in
            let name = "\u{301}b"
            #expect(mkdir(outside + "/" + name, 0o700) == 0)
            try Data("keep".utf8).write(to: URL(fileURLWithPath: outside + "/" + name + "/x.json"))
            #expect(symlink(outside, root + "/a") == 0)
            #expect(throws: StateError.self) {
                try Quarantine(paths: StatePaths(root: root)).isolate(root + "/a/" + name + "/x.json", reason: "test", now: Date())
            }
            #expect(try String(contentsOfFile: outside + "/" + name + "/x.json", encoding: .utf8) == "keep", "the file outside stays")
            let quarantined = (try? FileManager.default.contentsOfDirectory(atPath: root + "/quarantine")) ?? []
            #expect(quarantined.isEmpty)
        }
    }
}
