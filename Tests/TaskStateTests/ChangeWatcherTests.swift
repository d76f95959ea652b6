import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

@Suite("Change watcher")
struct ChangeWatcherTests {
    /// Waits for and collects changes until `done` holds or five seconds pass.
    private func collect(_ watcher: ChangeWatcher, until done: ([ChangeWatcher.Change]) -> Bool) -> [ChangeWatcher.Change] {
        var changes: [ChangeWatcher.Change] = []
        let deadline = Date().addingTimeInterval(5)
        while !done(changes), Date() < deadline {
            if watcher.wait(timeout: deadline.timeIntervalSinceNow) { changes += watcher.drain() }
        }
        return changes
    }

    @Test func seesAFileCreatedInAWatchedDirectory() throws {
        try withTemporaryDirectory { dir in
            let watcher = try ChangeWatcher()
            try watcher.watch(dir)
            #expect(watcher.watchedDirectories == [dir])
            #expect(!watcher.wait(timeout: 0.05), "nothing has happened yet")
            #expect(watcher.drain().isEmpty)

            try StateFiles.write(Data("{}".utf8), to: "\(dir)/a.json", durable: false)
            let changes = collect(watcher) { $0.contains { $0.name == "a.json" } }
            let arrival = try #require(changes.first { $0.name == "a.json" })
            #expect(arrival.directory == dir)
            #expect(arrival.mask & UInt32(IN_MOVED_TO) != 0, "an atomic write arrives as a rename")

            try writeText("x", to: "\(dir)/plain.txt")
            let written = collect(watcher) { $0.contains { $0.name == "plain.txt" && $0.mask & UInt32(IN_CLOSE_WRITE) != 0 } }
            #expect(written.contains { $0.name == "plain.txt" && $0.mask & UInt32(IN_CREATE) != 0 })

            try StateFiles.remove("\(dir)/a.json")
            let removed = collect(watcher) { $0.contains { $0.name == "a.json" && $0.mask & UInt32(IN_DELETE) != 0 } }
            #expect(removed.contains { $0.name == "a.json" && $0.mask & UInt32(IN_DELETE) != 0 })
        }
    }

    @Test func watchesSeveralDirectoriesAndForgetsRemovedOnes() throws {
        try withTemporaryDirectory { dir in
            let first = "\(dir)/one", second = "\(dir)/two"
            try FileManager.default.createDirectory(atPath: first, withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: second, withIntermediateDirectories: false)
            let watcher = try ChangeWatcher()
            try watcher.watch(first)
            try watcher.watch(second)
            #expect(Set(watcher.watchedDirectories) == [first, second])

            try writeText("", to: "\(second)/x")
            let changes = collect(watcher) { $0.contains { $0.name == "x" } }
            #expect(changes.contains { $0.directory == second && $0.name == "x" })
            #expect(!changes.contains { $0.directory == first })

            try FileManager.default.removeItem(atPath: first)
            let gone = collect(watcher) { _ in !watcher.watchedDirectories.contains(first) }
            #expect(gone.contains { $0.directory == first && $0.mask & UInt32(IN_DELETE_SELF) != 0 })
            #expect(watcher.watchedDirectories == [second])
        }
    }

    /// Watching a path again once another folder is there (the first moved away) drops the first
    /// folder's watch: what happens in it is no longer reported under the path.
    @Test func watchingAPathAgainForgetsTheFolderThatWasThere() throws {
        try withTemporaryDirectory { dir in
            let path = "\(dir)/new", away = "\(dir)/away"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            let watcher = try ChangeWatcher()
            try watcher.watch(path)
            #expect(rename(path, away) == 0)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try watcher.watch(path)
            #expect(watcher.watchedDirectories == [path])

            try writeText("", to: "\(away)/old")
            try writeText("", to: "\(path)/fresh")
            let changes = collect(watcher) { $0.contains { $0.name == "fresh" } }
            #expect(changes.contains { $0.directory == path && $0.name == "fresh" })
            #expect(!changes.contains { $0.name == "old" }, "the moved folder is not watched any more: \(changes)")
        }
    }

    @Test func refusesMissingDirectoriesFilesAndLinks() throws {
        try withTemporaryDirectory { dir in
            let watcher = try ChangeWatcher()
            #expect(throws: StateError.self) { try watcher.watch("\(dir)/missing") }
            try writeText("", to: "\(dir)/file")
            #expect(throws: StateError.self) { try watcher.watch("\(dir)/file") }
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/link", withDestinationPath: dir)
            #expect(throws: StateError.self) { try watcher.watch("\(dir)/link") }
            #expect(watcher.watchedDirectories.isEmpty)
        }
    }
}
