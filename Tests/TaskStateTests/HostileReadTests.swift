import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The file layer's side of issue 11: opening never blocks, never follows a link, and names
/// what it found instead of a regular file. (The programs' side: `HostileFileTests` and
/// `HostileFileCatalogueTests` in EndToEndTests.)
@Suite("Hostile files, read by TaskState", .timeLimit(.minutes(10)))
struct HostileReadTests {
    @Test func aFIFOIsRefusedAtOnceAndNamedByEveryOpener() throws {
        try withTemporaryDirectory { dir in
            let paths = StatePaths(root: dir)
            #expect(mkfifo(paths.events, 0o600) == 0)
            #expect(throws: StateError.notRegularFile(path: paths.events, kind: "a FIFO")) { try StateFiles.read(paths.events) }
            #expect(throws: StateError.notRegularFile(path: paths.events, kind: "a FIFO")) {
                try EventLog(paths: paths).append(Data("{}\n".utf8))
            }
            #expect(EventLog(paths: paths).problem() == "\(paths.events) is a FIFO, not a regular file")
            #expect(mkfifo(paths.lock, 0o600) == 0)
            #expect(StateLock.holder(paths) == nil)
            #expect(throws: StateLock.Failure.state(.notRegularFile(path: paths.lock, kind: "a FIFO"))) { try StateLock.acquire(paths) }
        }
    }

    @Test func aSymlinkedFolderIsNotListedAndATruncateDoesNotFollowALink() throws {
        try withTemporaryDirectory { dir in
            let outside = dir + "/outside"
            try FileManager.default.createDirectory(atPath: outside + "/folder", withIntermediateDirectories: true)
            try Data(repeating: 0x41, count: 100).write(to: URL(fileURLWithPath: outside + "/file"))
            let state = dir + "/state"
            try FileManager.default.createDirectory(atPath: state + "/requests", withIntermediateDirectories: true)
            #expect(symlink(outside + "/folder", state + "/requests/com.example.linked") == 0)
            #expect(throws: StateError.symbolicLink(state + "/requests/com.example.linked")) {
                try StateFiles.names(in: state + "/requests/com.example.linked")
            }
            let snapshot = StateSnapshot.load(StatePaths(root: state))
            #expect(snapshot.unreadable.map(\.path) == [state + "/requests/com.example.linked"])

            let paths = StatePaths(root: state)
            #expect(symlink(outside + "/file", paths.events) == 0)
            #expect(throws: StateError.symbolicLink(paths.events)) { try EventLog(paths: paths).truncate(to: 10) }
            #expect(StateFiles.size(of: outside + "/file") == 100, "the link's target keeps its bytes")
        }
    }

    @Test func decodeFailuresSayWhereAndWhatWasExpected() {
        func reason(_ text: String) -> String {
            do {
                _ = try JSONFormat.decode([String: Int].self, from: Data(text.utf8))
                return "decoded"
            } catch {
                return error.description
            }
        }
        #expect(reason("") == "not valid JSON: the file is empty (0 bytes); expected a JSON object")
        #expect(reason("{\"a\": 1,\n \"b\"") == "not valid JSON: it ends at byte offset 13 (line 2, column 5) inside an unfinished object; expected the rest of the JSON text (cut short?)")
        #expect(reason("{\"a\": \u{0}}") == "not valid JSON: NUL byte at byte offset 6 (line 1, column 7); expected JSON text")
        #expect(reason("{\"a\": \"x\"}") == "field 'a': expected an integer")
        #expect(reason("[1]") == "the top level: expected a JSON object")
    }
}
