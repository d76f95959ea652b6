import Foundation
import TaskState
import TestSupport
import Testing

/// How the real `bgtaskd` carries a transfer whose host does not answer: a refused connection is
/// known at once and goes straight to a retry; a silent host is given its connect timeout.
@Suite struct TransferConnectFailureTests {
    @Test func aRefusedConnectionFailsAtOnceWithItsRetryScheduled() async throws {
        let env = try TestEnvironment()
        // Retries ten minutes away, so each failed attempt's record is seen waiting for its retry.
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 600])
        let silent = try UnansweredPort.silent()
        defer { silent.close() }
        let refusing = try UnansweredPort.refusing()
        defer { refusing.close() }
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // The silent host first: it is given the scheduler's connect timeout (15 s).
        #expect(try fetcher.download("silent", silent.url("/file")).status == 0)
        try await env.eventually("the silent download to start") {
            fetcher.transfer("silent").map { $0.state == .running || $0.retries > 0 } ?? false
        }
        #expect(try fetcher.download("refused", refusing.url("/file")).status == 0)
        try await env.eventually("the refused download to fail") { (fetcher.transfer("refused")?.retries ?? 0) >= 1 }

        let refused = try #require(fetcher.transfer("refused"))
        #expect(refused.lastError == "could not connect: connection refused")
        #expect(refused.state == .waiting)
        #expect(refused.retryAt != nil)
        #expect(refused.retries == 1)

        // The event log keeps the order in which the attempts ended, however late this test looks:
        // the refusal, started second, ended first; the silent host waited for its timeout.
        var failures: [Event] = []
        try await env.eventually("both first attempts to fail", timeout: 60) {
            failures = env.events(.transferRetrying).filter { $0.reason == "retry 1" }
            return failures.count == 2
        }
        #expect(failures.map { $0.identifier?.rawValue } == ["refused", "silent"], "\(failures.map(\.message))")
        #expect(failures.first?.message.contains("failed (could not connect: connection refused); retry 1 in") == true)
        #expect(failures.last?.message.contains("failed (could not connect: timed out connecting); retry 1 in") == true)
        #expect(fetcher.transfer("silent")?.lastError == "could not connect: timed out connecting")
    }
}
