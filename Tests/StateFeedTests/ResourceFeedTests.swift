import Foundation
import SchedulerCore
import StateFeed
import TaskState
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `resources.json`, rewritten by the resource monitor while something runs, reaches the
/// dashboard's mirror through inotify, and `bgctl watch --json` carries it to `bgtop --host`.
@Suite struct ResourceFeedTests {
    static func report(cpu: Double?, memory: Int64, phase: LaunchResources.Phase = .running) throws -> ResourceReport {
        let sampled = Date(timeIntervalSince1970: 1_795_348_800)
        return ResourceReport(sampledAt: sampled, launches: [
            LaunchResources(launchID: "com.example.a-1795348790000", app: try Identifier(validating: "com.example.a"),
                            pids: [4100, 4101], cpuSeconds: 2.5, cpuPercent: cpu, memoryBytes: memory,
                            peakMemoryBytes: max(memory, 8 << 20), source: .proc, phase: phase, sampledAt: sampled),
        ])
    }

    /// Waits (bounded) for inotify's reports on `watch` and applies what they name to `mirror`.
    static func applyReports(_ watch: StateWatch, to mirror: StateMirror, paths: StatePaths, until done: () -> Bool) {
        for _ in 0..<50 where !done() {
            var descriptor = pollfd(fd: watch.descriptor, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, 200)
            var changes = StateChangeSet()
            changes.add(watch.drain(), paths: paths, configApps: watch.appsDirectory)
            if !changes.isEmpty { mirror.apply(changes) }
        }
    }

    @Test func aRewrittenResourcesFileReachesTheSnapshotAndTheFeed() throws {
        let root = FileManager.default.temporaryDirectory.path + "/feed-resources-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: root) }
        let paths = StatePaths(root: root)
        try StateFiles.ensureDirectory(root)
        let watch = try StateWatch(paths: paths, appsDirectory: root + "/config/apps")
        let mirror = StateMirror(paths: paths)
        #expect(mirror.snapshot.resources == nil)
        var publisher = FeedPublisher()
        let around = FeedPublisher.Surroundings(stateDirectory: root, configDirectory: root + "/config", schedulerPID: 42,
                                                directoryProblem: nil, settings: SchedulerSettings(), catalog: ManifestCatalog())
        var replica = FeedReplica()
        _ = try replica.apply(line: try JSONFormat.encodeLine(publisher.snapshot(mirror, around)).dropLast())

        // The first sample, then a rewrite: each reaches the mirror by its inotify report alone.
        let first = try Self.report(cpu: nil, memory: 4 << 20)
        try StateFiles.write(try JSONFormat.encode(first), to: paths.resources, durable: false)
        Self.applyReports(watch, to: mirror, paths: paths) { mirror.snapshot.resources == first }
        #expect(mirror.snapshot.resources == first)
        let second = try Self.report(cpu: 97.5, memory: 40 << 20, phase: .ending)
        try StateFiles.write(try JSONFormat.encode(second), to: paths.resources, durable: false)
        Self.applyReports(watch, to: mirror, paths: paths) { mirror.snapshot.resources == second }
        #expect(mirror.snapshot.resources == second)

        let change = publisher.change(mirror, around)
        #expect(change.resources == second)
        #expect(try replica.apply(line: try JSONFormat.encodeLine(change).dropLast()) == nil)
        #expect(replica.snapshot.resources == second)

        // Nothing runs any more: the file goes, and so does the sample on the far side.
        unlink(paths.resources)
        Self.applyReports(watch, to: mirror, paths: paths) { mirror.snapshot.resources == nil }
        #expect(mirror.snapshot.resources == nil)
        let gone = publisher.change(mirror, around)
        #expect(gone.cleared == ["resources"])
        #expect(try replica.apply(line: try JSONFormat.encodeLine(gone).dropLast()) == nil)
        #expect(replica.snapshot.resources == nil)
    }

    @Test func aSnapshotLineWithoutResourcesStillReads() throws {
        // A watch from before resources.json: its snapshot line has no such field.
        let line = #"{"type":"snapshot","version":1,"stateDirectory":"/s","configDirectory":"/c","requests":[],"tasks":[],"transfers":[],"apps":[],"pushes":[],"usage":[],"unreadable":[],"events":[],"settings":{},"manifests":[],"manifestProblems":[]}"#
        var replica = FeedReplica()
        #expect(try replica.apply(line: Data(line.utf8)) == nil)
        #expect(replica.hasSnapshot)
        #expect(replica.snapshot.resources == nil)
    }
}
