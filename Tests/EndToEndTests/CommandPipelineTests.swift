import CLinuxSupport
import Foundation
import Synchronization
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `CommandChannel.sendAll`: many commands in flight on one connection of the command socket,
/// each acknowledged only once committed, applied in order and at most once, whatever happens to
/// the connection.
@Suite struct CommandPipelineTests {
    static let app = "com.example.pipe"
    static let identifiers = (0..<10).map { "com.example.pipe.job\($0)" }

    static func submit(_ identifier: String, begin: Date = Date().addingTimeInterval(86_400)) throws -> Command {
        let request = SubmitRequest(app: try Identifier(validating: app), identifier: try Identifier(validating: identifier),
                                    kind: .processing, earliestBeginDate: begin)
        return Command(id: Command.newID(), issuedAt: Date(), issuerPID: getpid(), action: .submit(request))
    }

    static func cancel(_ identifier: String) throws -> Command {
        Command(id: Command.newID(), issuedAt: Date(), issuerPID: getpid(),
                action: .cancel(app: try Identifier(validating: app), identifier: try Identifier(validating: identifier)))
    }

    @Test func manyCommandsInFlightAreEachAnsweredOnceCommittedAndGroupedIntoFewerCommits() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let commands = try (0..<300).map { try Self.submit(Self.identifiers[$0 % 10]) }
        let deliveries = try CommandChannel(paths: env.paths).sendAll(commands, inFlight: 16, timeout: 600).map { try $0.get() }
        var appliedAt: Set<Date> = []
        for (command, delivery) in zip(commands, deliveries) {
            guard case .applied(let outcome) = delivery else {
                Issue.record("\(command.id): \(delivery)")
                return
            }
            #expect(outcome.command == command.id && outcome.error == nil)
            // Answered only once committed: its outcome file is there by then.
            #expect(StateFiles.exists(env.paths.outcome(command.id)))
            appliedAt.insert(outcome.appliedAt)
        }
        #expect(env.events(.submitted).count + env.events(.replaced).count == commands.count)
        #expect(try Inbox(paths: env.paths).waiting().isEmpty, "nothing went through the inbox")
        // Commands in flight together are applied in one batch (one commit, one journal sync).
        #expect(appliedAt.count < commands.count, "300 commands in \(appliedAt.count) batches")
    }

    @Test func oneConnectionsCommandsAreAppliedInTheOrderSent() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let last = Date().addingTimeInterval(3 * 86_400)
        var commands: [Command] = []
        for round in 0..<20 {
            commands.append(try Self.submit(Self.identifiers[0], begin: Date().addingTimeInterval(86_400 + Double(round))))
            commands.append(try Self.submit(Self.identifiers[1]))
            commands.append(try Self.cancel(Self.identifiers[1]))
        }
        commands.append(try Self.submit(Self.identifiers[0], begin: last))
        let deliveries = try CommandChannel(paths: env.paths).sendAll(commands, inFlight: 64, timeout: 600).map { try $0.get() }
        #expect(deliveries.allSatisfy { if case .applied(let outcome) = $0 { outcome.error == nil } else { false } }, "\(deliveries)")
        let requests = StateSnapshot.load(env.paths).requests
        #expect(requests.map(\.identifier.rawValue) == [Self.identifiers[0]], "every submit of job1 was followed by its cancel")
        #expect(requests.first?.earliestBeginDate.map { abs($0.timeIntervalSince(last)) < 0.002 } == true, "the last submit won")
    }

    @Test func aConnectionThatEndsUnansweredLeavesEveryCommandAppliedExactlyOnce() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let commands = try (0..<40).map { try Self.submit(Self.identifiers[$0 % 10]) }
        let paths = env.paths
        // Eight taken in flight, then the scheduler is gone.
        let delivered = try VanishingScheduler.take(8, in: env) {
            (try? CommandChannel(paths: paths).sendAll(commands, inFlight: 8, timeout: 20).map { try $0.get() }) ?? []
        }
        #expect(delivered == Array(repeating: .queued, count: commands.count), "no scheduler runs: all wait in the inbox")
        #expect(Set(try Inbox(paths: env.paths).waiting()) == Set(commands.map { "\($0.id).json" }))

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("the queued commands to be applied", timeout: 600) {
            commands.allSatisfy { StateFiles.exists(env.paths.outcome($0.id)) }
        }
        // Sent again in one pipeline (a client that retries): answered with the same outcomes.
        let again = try CommandChannel(paths: env.paths).sendAll(commands, timeout: 600).map { try $0.get() }
        #expect(zip(commands, again).allSatisfy { command, delivery in
            if case .applied(let outcome) = delivery { outcome.command == command.id && outcome.error == nil } else { false }
        })
        #expect(env.events(.submitted).count + env.events(.replaced).count == commands.count, "\(env.events().map(\.message))")
    }

    @Test func theSameIdTwiceAndABadWindowAreHandled() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let channel = CommandChannel(paths: env.paths)
        let first = try Self.submit(Self.identifiers[0])
        let deliveries = try channel.sendAll([first, try Self.submit(Self.identifiers[1]), first], timeout: 600).map { try $0.get() }
        guard case .applied(let one) = deliveries[0], case .applied(let two) = deliveries[2] else {
            Issue.record("\(deliveries)")
            return
        }
        #expect(one == two, "the second copy is answered with the first's outcome")
        #expect(env.events(.submitted).count == 2, "applied once: \(env.events().map(\.message))")
        #expect(throws: StateError.self) { try channel.sendAll([first], inFlight: 0) }
        #expect(throws: StateError.self) { try channel.sendAll([first], inFlight: CommandChannel.maximumInFlight + 1) }
    }
}

/// A scheduler that takes commands and never answers (stopped, or stuck on a slow disk).
@Suite struct CommandPipelineTimeoutTests {
    @Test func aSchedulerThatNeverAnswersCostsOneTimeoutAndEveryCommandWaitsInTheInbox() throws {
        let env = try TestEnvironment()
        try env.addApp(CommandPipelineTests.app, identifiers: CommandPipelineTests.identifiers, script: "exit 0")
        try StateFiles.ensureDirectory(env.paths.root)
        let listener = bg_seqpacket_listen(env.paths.controlSocket, 4)
        try #require(listener >= 0)
        defer { close(listener) }
        let stop = Atomic<Bool>(false)
        let reader = Thread {
            var connections: [Int32] = []
            var buffer = [UInt8](repeating: 0, count: 1 << 16)
            while !stop.load(ordering: .relaxed) {
                let connection = bg_seqpacket_accept(listener)
                if connection >= 0 { connections.append(connection) }
                for descriptor in connections { _ = buffer.withUnsafeMutableBytes { bg_recv_message(descriptor, $0.baseAddress, $0.count) } }
                usleep(5_000)
            }
            for descriptor in connections { close(descriptor) }
        }
        reader.start()
        defer { stop.store(true, ordering: .relaxed) }
        // Ids a microsecond apart: the inbox's order is theirs.
        let base = Date()
        let commands = try (0..<12).map { index in
            var command = try CommandPipelineTests.submit(CommandPipelineTests.identifiers[index % 10])
            command.id = Command.newID(at: base.addingTimeInterval(Double(index) / 1_000_000))
            return command
        }
        let started = Date()
        let results = try CommandChannel(paths: env.paths).sendAll(commands, inFlight: 2, timeout: 1).map { try $0.get() }
        let took = Date().timeIntervalSince(started)
        #expect(results == Array(repeating: .noAnswer, count: commands.count), "\(results)")
        // Waiting 1 s for each of the 11 not answered first would take 11 s.
        #expect(took < 8, "one wait of 1 s, not one per command: \(took) s")
        #expect(try Inbox(paths: env.paths).waiting() == commands.map { "\($0.id).json" }, "all durable in the inbox, in order")
    }
}
