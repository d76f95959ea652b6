import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A busy scheduler replaces `daemon.json` at most once a second, not at every commit (each
/// replacement is a new inode and a freed one), and the file still says, to the second, when the
/// last commit was.
@Suite struct HeartbeatRewriteTests {
    static let app = "com.example.beat"
    static let identifiers = (0..<10).map { "com.example.beat.job\($0)" }

    @Test func commandsInQuickSuccessionReplaceTheHeartbeatOnceASecond() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { _ = daemon.stop() }
        let channel = CommandChannel(paths: env.paths)
        // One date for every request, so that the next wake (also in the file) stays the same.
        let begin = Date().addingTimeInterval(86_400)
        var inodes: Set<ino_t> = []
        var lastSentAt = Date()
        var lastAnsweredAt = Date()
        let startedAt = Date()
        for index in 0..<60 {
            let request = SubmitRequest(app: try Identifier(validating: Self.app),
                                        identifier: try Identifier(validating: Self.identifiers[index % 10]),
                                        kind: .processing, earliestBeginDate: begin)
            lastSentAt = Date()
            let delivery = try channel.send(Command(id: Command.newID(), issuedAt: Date(), issuerPID: getpid(), action: .submit(request)),
                                            timeout: 600)
            lastAnsweredAt = Date()
            guard case .applied(let outcome) = delivery, outcome.error == nil else {
                Issue.record("command \(index) not applied: \(delivery)")
                return
            }
            var status = stat()
            try #require(stat(env.paths.heartbeat, &status) == 0, "daemon.json exists once a command is answered")
            inodes.insert(status.st_ino)
        }
        // Every second the burst touched may have one file, plus the one written at start-up.
        let seconds = Int(lastAnsweredAt.timeIntervalSince1970.rounded(.down) - startedAt.timeIntervalSince1970.rounded(.down)) + 1
        #expect(inodes.count <= seconds + 1, "60 commits over \(seconds) s replaced daemon.json \(inodes.count) times")
        let heartbeat = try JSONFormat.decode(DaemonHeartbeat.self, from: try StateFiles.read(env.paths.heartbeat))
        let readAt = Date()
        let written = heartbeat.updatedAt.timeIntervalSince1970.rounded(.down)
        // The last command's commit, or a later one, is in the file to the second.
        #expect(written >= lastSentAt.timeIntervalSince1970.rounded(.down) && written <= readAt.timeIntervalSince1970.rounded(.down),
                "updatedAt \(heartbeat.updatedAt) is the second of the last commit (sent \(lastSentAt), read \(readAt))")
        #expect(heartbeat.pid == daemon.pid)
    }
}
