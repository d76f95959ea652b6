import Foundation
import TaskState
import TestSupport
import Testing

/// How the real `bgtaskd` carries a transfer whose host does not answer: a refused connection is
/// known at once and goes straight to a retry; a silent host is given its connect timeout.
@Suite struct TransferConnectFailureTests {
    @Test func aRefusedConnectionFailsAtOnceWithItsRetryScheduled() async throws {
        let env = try TestEnvironment()
        // Retries an hour away, so each failed attempt's record is seen waiting for its retry.
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 3600])
        let silent = try UnansweredPort.silent()
        defer { silent.close() }
        let refusing = try UnansweredPort.refusing()
        defer { refusing.close() }
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // Both at once, nothing awaited between them: the silent host is given the scheduler's
        // connect timeout (15 s), the refusal is known at once.
        #expect(try fetcher.download("silent", silent.url("/file")).status == 0)
        #expect(try fetcher.download("refused", refusing.url("/file")).status == 0)
        try await env.eventually("the refused download to fail") { (fetcher.transfer("refused")?.retries ?? 0) >= 1 }

        let refused = try #require(fetcher.transfer("refused"))
        #expect(refused.lastError == "could not connect: connection refused")
        #expect(refused.state == .waiting)
        #expect(refused.retryAt != nil)
        #expect(refused.retries == 1)

        // How long each first attempt lasted, by the scheduler's own clock in the event log (from
        // its `transferStarted` to its `transferRetrying`), so a test that looks late, or is
        // starved between the two downloads, sees the same.
        var failures: [Event] = []
        try await env.eventually("both first attempts to fail", timeout: 60) {
            failures = env.events(.transferRetrying).filter { $0.reason == "retry 1" }
            return failures.count == 2
        }
        func attempt(_ id: String) throws -> (seconds: Double, failure: Event) {
            let started = try #require(env.events(.transferStarted).first { $0.identifier?.rawValue == id }, "\(env.events().map(\.message))")
            let failure = try #require(failures.first { $0.identifier?.rawValue == id }, "\(failures.map(\.message))")
            return (failure.time.timeIntervalSince(started.time), failure)
        }
        let refusal = try attempt("refused")
        let silence = try attempt("silent")
        #expect(refusal.seconds < 5, "a refusal ends its attempt at once, not at the connect timeout: \(refusal.seconds) s")
        #expect(silence.seconds >= 14, "a silent host is given the 15 s connect timeout: \(silence.seconds) s")
        #expect(refusal.failure.message.contains("failed (could not connect: connection refused); retry 1 in"), "\(refusal.failure.message)")
        #expect(silence.failure.message.contains("failed (could not connect: timed out connecting); retry 1 in"), "\(silence.failure.message)")
        #expect(fetcher.transfer("silent")?.lastError == "could not connect: timed out connecting")
    }
}
