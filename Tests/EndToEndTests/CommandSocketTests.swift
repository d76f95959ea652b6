import CLinuxSupport
import Foundation
import Synchronization
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The command socket (`control.sock`): commands to a running scheduler go over it, answered once
/// committed, with no file and no inotify instance of the client's; whatever it does not answer
/// goes through the inbox, and a command id is applied at most once.
@Suite struct CommandSocketTests {
    static let app = "com.example.many"
    static let identifiers = (0..<10).map { "com.example.many.job\($0)" }

    static func submit(_ identifier: String, id: String = Command.newID()) throws -> Command {
        let request = SubmitRequest(app: try Identifier(validating: app), identifier: try Identifier(validating: identifier),
                                    kind: .processing, earliestBeginDate: Date().addingTimeInterval(86_400))
        return Command(id: id, issuedAt: Date(), issuerPID: getpid(), action: .submit(request))
    }

    @Test func fiveHundredClientsAtOnceAreAllAnsweredWithoutAnInotifyInstanceEach() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        var status = stat()
        #expect(lstat(env.paths.controlSocket, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK && status.st_mode & 0o777 == 0o600, "a socket only its owner may use")

        // 500 waiting at once: four times a user's default inotify instances (128), so a client
        // that needed one per command would fail with "Too many open files".
        let clients = 500
        let perClient = 10
        let results = Mutex<[String]>([])
        let finished = DispatchSemaphore(value: 0)
        let channel = CommandChannel(paths: env.paths)
        for client in 0..<clients {
            let thread = Thread {
                var failures: [String] = []
                for _ in 0..<perClient {
                    do {
                        let delivery = try channel.send(try Self.submit(Self.identifiers[client % Self.identifiers.count]), timeout: 60)
                        guard case .applied(let outcome) = delivery, outcome.error == nil else {
                            failures.append("\(delivery)")
                            continue
                        }
                    } catch {
                        failures.append("\(error)")
                    }
                }
                results.withLock { $0.append(contentsOf: failures) }
                finished.signal()
            }
            thread.stackSize = 256 << 10
            thread.start()
        }
        for _ in 0..<clients { finished.wait() }
        let failures = results.withLock { $0 }
        #expect(failures.isEmpty, "\(failures.count) of \(clients * perClient) not applied: \(failures.prefix(3))")
        #expect(env.events(.submitted).count + env.events(.replaced).count == clients * perClient)
        let waiting = try Inbox(paths: env.paths).waiting()
        #expect(waiting.isEmpty, "nothing went through the inbox")
    }

    @Test func aSchedulerThatEndsBeforeAnsweringLeavesTheCommandInTheInboxAndItIsAppliedOnce() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let command = try Self.submit(Self.identifiers[0])
        let paths = env.paths
        let delivered = try VanishingScheduler.take(1, in: env) { try? CommandChannel(paths: paths).send(command, timeout: 20) }
        #expect(delivered == .queued, "no scheduler runs: the command waits in the inbox")
        #expect(try Inbox(paths: env.paths).waiting() == ["\(command.id).json"])

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("the queued command to be applied") { StateFiles.exists(env.paths.outcome(command.id)) }
        // Sent again (a client that retries): answered with the same outcome, not applied again.
        let again = try CommandChannel(paths: env.paths).send(command)
        guard case .applied(let outcome) = again else {
            Issue.record("not answered: \(again)")
            return
        }
        #expect(outcome.command == command.id && outcome.error == nil)
        #expect(env.events(.submitted).count == 1, "\(env.events().map(\.message))")
    }

    @Test func nonsenseOnTheSocketIsRejectedAndTheSchedulerRunsOn() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        func exchange(_ bytes: [UInt8]) throws -> String? {
            let connection = bg_seqpacket_connect(env.paths.controlSocket)
            try #require(connection >= 0)
            defer { close(connection) }
            #expect(bytes.withUnsafeBytes { bg_send_message(connection, $0.baseAddress, $0.count) } == bytes.count)
            // The connection is non-blocking: wait for the answer, or for the end of it.
            var entry = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            #expect(poll(&entry, 1, 20_000) == 1, "an answer or the end within 20 s")
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            let count = buffer.withUnsafeMutableBytes { bg_recv_message(connection, $0.baseAddress, $0.count) }
            return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
        }
        // Not JSON: nothing to answer, the connection is closed.
        #expect(try exchange(Array("{".utf8)) == nil)
        // More than a command may be: closed as well.
        #expect(try exchange([UInt8](repeating: 0x20, count: 70_000)) == nil)
        // A command id, and nonsense beside it: told why, under that id.
        let answer = try #require(try exchange(Array(#"{"id":"bad-1","issuedAt":"2026-11-25T00:00:00Z","action":{"nonsense":1}}"#.utf8)))
        let outcome = try JSONFormat.decode(CommandOutcome.self, from: Data(answer.utf8))
        #expect(outcome.command == "bad-1" && outcome.error?.code == .invalidCommand, "\(answer)")
        #expect(env.events(.commandRejected).count == 3, "\(env.events().map(\.message))")
        // It goes on serving.
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", Self.identifiers[0], "--kind", "processing",
                              "--earliest", "+3600").status == 0)
        #expect(processIsAlive(daemon.pid))
    }

    @Test func aFileThatIsNotASocketIsLeftAloneAndCommandsUseTheInbox() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        try StateFiles.ensureDirectory(env.paths.root)
        try Data("not a socket\n".utf8).write(to: URL(fileURLWithPath: env.paths.controlSocket))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let submitted = try env.bgctl("submit", "--app", Self.app, "--id", Self.identifiers[0], "--kind", "processing", "--earliest", "+3600")
        #expect(submitted.status == 0 && submitted.stdout.contains("submitted"), "\(submitted)")
        #expect(daemon.log.contains("no command socket:"), "\(daemon.log)")
        #expect(try String(contentsOfFile: env.paths.controlSocket, encoding: .utf8) == "not a socket\n")
    }

    /// `control.sock` a symbolic link to a socket outside the state folder, where something
    /// listens: neither the scheduler nor a client goes through it.
    @Test func aSymbolicLinkToASocketElsewhereIsNeverFollowed() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        try StateFiles.ensureDirectory(env.paths.root)
        let elsewhere = "\(env.root)/elsewhere.sock"
        let listener = bg_seqpacket_listen(elsewhere, 4)
        try #require(listener >= 0)
        defer { close(listener) }
        #expect(symlink(elsewhere, env.paths.controlSocket) == 0)
        // No scheduler: the client sees the link and uses the inbox.
        #expect(try CommandChannel(paths: env.paths).send(try Self.submit(Self.identifiers[0])) == .queued)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("the queued command") { env.events(.submitted).count == 1 }
        let submitted = try env.bgctl("submit", "--app", Self.app, "--id", Self.identifiers[1], "--kind", "processing", "--earliest", "+3600")
        #expect(submitted.status == 0 && submitted.stdout.contains("submitted"), "\(submitted)")
        #expect(daemon.log.contains("no command socket:"), "\(daemon.log)")
        #expect(bg_seqpacket_accept(listener) < 0 && errno == EAGAIN, "nobody connected to the socket the link points to")
        var status = stat()
        #expect(lstat(env.paths.controlSocket, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link is left alone")
    }

    @Test func aSocketLeftByAKilledSchedulerIsReplacedAndRemovedAtAStop() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let first = try env.startDaemon()
        kill(first.pid, SIGKILL)
        first.stop()
        #expect(StateFiles.exists(env.paths.controlSocket), "a killed scheduler cannot remove it")
        // With no one listening, a client uses the inbox at once.
        #expect(try CommandChannel(paths: env.paths).send(try Self.submit(Self.identifiers[1])) == .queued)

        let second = try env.startDaemon()
        try env.waitUntil("the queued command") { env.events(.submitted).count == 1 }
        let answered = try CommandChannel(paths: env.paths).send(try Self.submit(Self.identifiers[2]))
        guard case .applied(let outcome) = answered else {
            Issue.record("not answered over the new socket: \(answered)")
            return
        }
        #expect(outcome.error == nil)
        second.stop()
        #expect(!StateFiles.exists(env.paths.controlSocket), "a scheduler that stops removes its socket")
    }
}
