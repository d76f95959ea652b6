import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The poison-command guard (SchedulerRuntime/PoisonGuard.swift): a command in hand when the
/// scheduler crashed is set aside at the next start instead of crashing it again.
///
/// How the crash is made: there is no command left that crashes `bgtaskd` (the numbers that did are
/// refused now, see NumericBoundsTests), and production code has no hook to trap on demand. So the
/// two halves are shown for real, separately: a real `bgtaskd` killed by a real fatal signal writes
/// the crash line into `applying.json` (its signal handler); and a real `bgtaskd` started on a
/// marker written by hand exactly as a crash leaves it (phase, command, crash line) sets that
/// command aside. A marker without the crash line, as SIGKILL leaves it, sets nothing aside.
@Suite struct PoisonCommandTests {
    static let app = "com.example.poison"

    private func prepare() throws -> (TestEnvironment, String) {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: ["\(Self.app).refresh"], script: "exit 0\n")
        let command = Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(SubmitRequest(
            app: try Identifier(validating: Self.app), identifier: try Identifier(validating: "\(Self.app).refresh"),
            kind: .appRefresh, earliestBeginDate: Date().addingTimeInterval(3600))))
        try Inbox(paths: env.paths).enqueue(command)
        return (env, command.id)
    }

    private var marker: String { "applying.json" }

    @Test func aCommandTheSchedulerCrashedOnIsSetAsideWithAReason() async throws {
        let (env, id) = try prepare()
        try Data("applying\n\(id).json\ncrashed signal 4\n".utf8).write(to: URL(fileURLWithPath: "\(env.state)/\(marker)"))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try await env.eventually("the set-aside command's outcome") { StateFiles.exists(env.paths.outcome(id)) }
        let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
        #expect(outcome.error?.name == "invalidCommand")
        #expect(outcome.error?.message.hasPrefix("bgtaskd crashed (signal 4) while applying this command") == true, "\(outcome)")
        #expect(try Inbox(paths: env.paths).waiting().isEmpty)
        #expect(try env.requests().isEmpty, "it was not applied")
        let kept = try FileManager.default.contentsOfDirectory(atPath: env.paths.quarantine)
        #expect(kept.contains { $0.hasSuffix("inbox__new__\(id).json") }, "\(kept)")
        #expect(kept.contains { $0.hasSuffix("inbox__new__\(id).json.reason") })
        let rejected = env.events(.commandRejected)
        #expect(rejected.count == 1)
        #expect(rejected.first?.message.contains("set aside") == true)
        #expect(daemon.isRunning)
        let left = try String(contentsOfFile: "\(env.state)/\(marker)", encoding: .utf8)
        #expect(left.prefix { $0 != "\0" }.isEmpty, "nothing is in hand (what is in hand ends at a zero byte): \(left.debugDescription)")
    }

    /// A command from the command socket has no inbox file: the marker names it `socket:<id>`. Its
    /// client, seeing the connection end, wrote the same command into the inbox; that copy is
    /// refused, not applied, and an inbox command beside it is not blamed.
    @Test func aSocketCommandTheSchedulerCrashedOnIsRefusedWhenItsClientResendsIt() async throws {
        let (env, id) = try prepare()
        let innocent = Command(issuedAt: Date(), issuerPID: getpid(), action: .cancelAll(app: try Identifier(validating: Self.app)))
        try Inbox(paths: env.paths).enqueue(innocent)
        try Data("applying\nsocket:\(id)\ncrashed signal 11\n".utf8).write(to: URL(fileURLWithPath: "\(env.state)/\(marker)"))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try await env.eventually("both outcomes") {
            StateFiles.exists(env.paths.outcome(id)) && StateFiles.exists(env.paths.outcome(innocent.id))
        }
        let refused = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
        #expect(refused.error?.name == "invalidCommand")
        #expect(refused.error?.message.hasPrefix("bgtaskd crashed (signal 11) while applying this command from the command socket") == true,
                "\(refused)")
        let applied = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(innocent.id)))
        #expect(applied.error == nil, "the inbox command beside it is applied: \(applied)")
        #expect(try env.requests().isEmpty, "the refused submit was not applied")
        #expect(env.events(.commandRejected).count == 1)
        #expect(daemon.isRunning)
    }

    @Test func aCommandInHandWhenTheSchedulerWasKilledIsAppliedAgain() async throws {
        let (env, id) = try prepare()
        try Data("committing\n\(id).json\n".utf8).write(to: URL(fileURLWithPath: "\(env.state)/\(marker)"))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try await env.eventually("the command's outcome") { StateFiles.exists(env.paths.outcome(id)) }
        let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
        #expect(outcome.error == nil, "\(outcome)")
        #expect(try env.requests().count == 1)
        #expect(env.events(.commandRejected).isEmpty)
    }

    @Test func suspectsOfACrashedTurnAreAppliedOneATime() async throws {
        let (env, first) = try prepare()
        let second = Command(issuedAt: Date(), action: .setAppEnabled(app: try Identifier(validating: Self.app), enabled: false))
        try Inbox(paths: env.paths).enqueue(second)
        try Data("committing\n\(first).json\n\(second.id).json\ncrashed signal 11\n".utf8)
            .write(to: URL(fileURLWithPath: "\(env.state)/\(marker)"))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try await env.eventually("both outcomes") {
            StateFiles.exists(env.paths.outcome(first)) && StateFiles.exists(env.paths.outcome(second.id))
        }
        for id in [first, second.id] {
            let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
            #expect(outcome.error == nil, "a suspect that does not crash is applied: \(outcome)")
        }
        #expect(daemon.log.contains("suspect"), "\(daemon.log.suffix(2000))")
    }

    @Test func aFatalSignalWritesTheCrashLine() async throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon()
        kill(daemon.pid, SIGABRT)
        try await env.eventually("bgtaskd to die of SIGABRT") { !processIsAlive(daemon.pid) }
        daemon.crash()
        let text = try String(contentsOfFile: "\(env.state)/\(marker)", encoding: .utf8)
        #expect(text.hasSuffix("crashed signal \(SIGABRT)\n"), "\(text)")
    }
}
