import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

@Suite("Atomic state files")
struct StateFilesTests {
    @Test(arguments: [true, false])
    func writeCreatesThenReplacesWithoutLeavingTemporaryFiles(durable: Bool) throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/com.example.news.json"
            try StateFiles.write(Data("first\n".utf8), to: path, durable: durable)
            #expect(try StateFiles.read(path) == Data("first\n".utf8))
            #expect(permissions(path) == 0o600)

            for round in 0..<20 {
                try StateFiles.write(Data("round \(round)\n".utf8), to: path, durable: durable)
            }
            #expect(String(decoding: try StateFiles.read(path), as: UTF8.self) == "round 19\n")
            #expect(try allEntries(dir) == ["com.example.news.json"], "no temporary file is left behind")
        }
    }

    @Test func writeOfEmptyAndLargeData() throws {
        try withTemporaryDirectory { dir in
            try StateFiles.write(Data(), to: "\(dir)/empty", durable: true)
            #expect(try StateFiles.read("\(dir)/empty").isEmpty)
            let big = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            try StateFiles.write(big, to: "\(dir)/big", durable: false)
            #expect(try StateFiles.read("\(dir)/big") == big)
        }
    }

    @Test func aFailedWriteLeavesNothingBehind() throws {
        try withTemporaryDirectory { dir in
            // The target is a non-empty directory: the rename must fail and the temporary file go.
            try FileManager.default.createDirectory(atPath: "\(dir)/target/inner", withIntermediateDirectories: true)
            #expect(throws: StateError.self) { try StateFiles.write(Data("x".utf8), to: "\(dir)/target", durable: true) }
            #expect(try allEntries(dir) == ["target"])
            // A missing folder is an error, not a crash.
            #expect(throws: StateError.self) { try StateFiles.write(Data("x".utf8), to: "\(dir)/missing/file", durable: false) }
        }
    }

    @Test func readRefusesASymbolicLink() throws {
        try withTemporaryDirectory { dir in
            try writeText("secret", to: "\(dir)/real")
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/link", withDestinationPath: "\(dir)/real")
            #expect(throws: StateError.symbolicLink("\(dir)/link")) { try StateFiles.read("\(dir)/link") }
            #expect(StateError.symbolicLink("\(dir)/link").description == "\(dir)/link is a symbolic link; refusing to follow it")
        }
    }

    @Test func readReportsMissingOversizedAndNonRegularFiles() throws {
        try withTemporaryDirectory { dir in
            #expect(throws: StateError.system(operation: "cannot open", path: "\(dir)/nope", errno: ENOENT)) {
                try StateFiles.read("\(dir)/nope")
            }
            let missing = StateError.system(operation: "cannot open", path: "\(dir)/nope", errno: ENOENT)
            #expect(missing.description == "cannot open \(dir)/nope: No such file or directory")

            try writeText(String(repeating: "x", count: 100), to: "\(dir)/big")
            #expect(throws: StateError.tooLarge(path: "\(dir)/big", bytes: 100)) { try StateFiles.read("\(dir)/big", maximumSize: 99) }
            #expect(try StateFiles.read("\(dir)/big", maximumSize: 100).count == 100)

            try FileManager.default.createDirectory(atPath: "\(dir)/folder", withIntermediateDirectories: false)
            #expect(throws: StateError.notRegularFile(path: "\(dir)/folder", kind: "a directory")) { try StateFiles.read("\(dir)/folder") }
        }
    }

    @Test func namesHideDotFilesAndAreSorted() throws {
        try withTemporaryDirectory { dir in
            for name in ["b.json", ".b.json.1.2.tmp", "a.json", "c"] { try writeText("", to: "\(dir)/\(name)") }
            #expect(try StateFiles.names(in: dir) == ["a.json", "b.json", "c"])
            #expect(try StateFiles.names(in: "\(dir)/missing") == [])
            #expect(throws: StateError.self) { try StateFiles.names(in: "\(dir)/c") }
        }
    }

    @Test func moveRemoveExistsAndSize() throws {
        try withTemporaryDirectory { dir in
            try writeText("12345", to: "\(dir)/a")
            #expect(StateFiles.exists("\(dir)/a"))
            #expect(StateFiles.size(of: "\(dir)/a") == 5)
            try StateFiles.move("\(dir)/a", to: "\(dir)/b")
            #expect(!StateFiles.exists("\(dir)/a"))
            #expect(StateFiles.size(of: "\(dir)/b") == 5)
            try StateFiles.remove("\(dir)/b")
            try StateFiles.remove("\(dir)/b") // already gone: not an error
            #expect(!StateFiles.exists("\(dir)/b"))
            #expect(StateFiles.size(of: "\(dir)/b") == nil)
            #expect(StateFiles.directoryName(of: "/a/b/c.json") == "/a/b")
            #expect(StateFiles.directoryName(of: "/c.json") == "/")
            #expect(StateFiles.directoryName(of: "c.json") == ".")
        }
    }

    @Test func ensureDirectoryCreatesPrivateFoldersAndRefusesLinks() throws {
        try withTemporaryDirectory { dir in
            try StateFiles.ensureDirectory("\(dir)/requests")
            #expect(permissions("\(dir)/requests") == 0o700)
            try StateFiles.ensureDirectory("\(dir)/requests") // exists: fine
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/link", withDestinationPath: "\(dir)/requests")
            #expect(throws: StateError.symbolicLink("\(dir)/link")) { try StateFiles.ensureDirectory("\(dir)/link") }
            try writeText("", to: "\(dir)/file")
            #expect(throws: StateError.unsafeDirectory("\(dir)/file exists and is a regular file, not a directory")) {
                try StateFiles.ensureDirectory("\(dir)/file")
            }
        }
    }

    @Test func syncCallsWorkOnARealDirectory() throws {
        try withTemporaryDirectory { dir in
            try StateFiles.syncDirectory(dir)
            try StateFiles.syncFileSystem(containing: dir)
            #expect(throws: StateError.self) { try StateFiles.syncDirectory("\(dir)/missing") }
        }
    }
}

@Suite("State directory check")
struct StateDirectoryCheckTests {
    @Test func createsAPrivateDirectoryWithItsParents() throws {
        try withTemporaryDirectory { dir in
            let state = "\(dir)/home/.local/state/bgtask"
            try StateDirectoryCheck.prepare(state)
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: state, isDirectory: &isDirectory) && isDirectory.boolValue)
            #expect(permissions(state) == 0o700)
            try StateDirectoryCheck.prepare(state) // a second time: still fine
        }
    }

    @Test func refusesADirectoryOpenToOthers() throws {
        try withTemporaryDirectory { dir in
            let state = "\(dir)/state"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
            #expect(chmod(state, 0o755) == 0)
            do throws(StateError) {
                try StateDirectoryCheck.prepare(state)
                Issue.record("a 0755 state directory was accepted")
            } catch {
                guard case .unsafeDirectory(let message) = error else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(message.contains("chmod 700 \(state)"), "\(message)")
                #expect(message.contains("0755"), "\(message)")
            }
            #expect(chmod(state, 0o750) == 0)
            #expect(throws: StateError.self) { try StateDirectoryCheck.prepare(state) }
            #expect(chmod(state, 0o700) == 0)
            try StateDirectoryCheck.prepare(state)
        }
    }

    @Test func refusesASymbolicLinkAndAFile() throws {
        try withTemporaryDirectory { dir in
            let real = "\(dir)/real"
            try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: false)
            #expect(chmod(real, 0o700) == 0)
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/link", withDestinationPath: real)
            do throws(StateError) {
                try StateDirectoryCheck.prepare("\(dir)/link")
                Issue.record("a symbolic link was accepted")
            } catch {
                #expect(error.description.contains("is a symbolic link"), "\(error.description)")
            }
            try writeText("", to: "\(dir)/file")
            #expect(throws: StateError.unsafeDirectory("state directory \(dir)/file is not a directory")) {
                try StateDirectoryCheck.prepare("\(dir)/file")
            }
        }
    }
}

@Suite("Locations")
struct LocationsTests {
    @Test func flagThenEnvironmentThenXDGThenHome() {
        #expect(Locations.stateDirectory(flag: "/s", environment: ["BGTASK_STATE_DIR": "/e"]) == "/s")
        #expect(Locations.stateDirectory(flag: nil, environment: ["BGTASK_STATE_DIR": "/e", "XDG_STATE_HOME": "/x"]) == "/e")
        #expect(Locations.stateDirectory(flag: nil, environment: ["XDG_STATE_HOME": "/x", "HOME": "/h"]) == "/x/bgtask")
        #expect(Locations.stateDirectory(flag: nil, environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]) == "/h/.local/state/bgtask")
        #expect(Locations.configDirectory(flag: nil, environment: ["HOME": "/h"]) == "/h/.config/bgtask")
        #expect(Locations.configDirectory(flag: nil, environment: ["XDG_CONFIG_HOME": "/c"]) == "/c/bgtask")
        #expect(Locations.configDirectory(flag: nil, environment: ["BGTASK_CONFIG_DIR": "/b"]) == "/b")
        #expect(Locations.stateDirectory(flag: "rel", environment: [:]).hasPrefix("/"))
    }

    /// The process's own variables are read by name, as ProcessInfo's whole copy has them.
    @Test func theProcessEnvironmentIsReadByName() {
        #expect(EnvironmentVariables.process["PATH"] == ProcessInfo.processInfo.environment["PATH"])
        #expect(EnvironmentVariables.process["PATH"] != nil)
        let unset = "BGTOP_TEST_UNSET_\(getpid())"
        #expect(EnvironmentVariables.process[unset] == nil)
        #expect(EnvironmentVariables(["A": "1"])["A"] == "1")
        #expect(EnvironmentVariables(["A": "1"])["PATH"] == nil, "a given set does not fall back to the process's")
    }

    @Test func pathsInsideTheStateDirectory() {
        let paths = StatePaths(root: "/s///")
        #expect(paths.root == "/s")
        let key = TaskKey(app: ident("com.a"), identifier: ident("t"))
        #expect(paths.request(key) == "/s/requests/com.a/t.json")
        #expect(paths.task(key) == "/s/tasks/com.a/t.json")
        #expect(paths.app(ident("com.a")) == "/s/apps/com.a.json")
        #expect(paths.rotatedEvents(2) == "/s/events.2.jsonl")
        #expect(paths.inboxNew == "/s/inbox/new")
        #expect(StatePaths(root: "/").root == "/")
    }
}
