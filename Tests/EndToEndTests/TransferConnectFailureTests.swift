import Foundation
import TaskState
import TestSupport
import Testing

/// How the real `bgtaskd` carries a transfer whose host does not answer: a refused connection is
/// known at once and goes straight to a retry; a silent host is given its connect timeout.
@Suite struct TransferConnectFailureTests {
    @Test func aRefusedConnectionFailsAtOnceWithItsRetryScheduled() async throws {
        let env = try TestEnvironment()
        // A retry a minute away, so the failed attempt's record is seen waiting for it.
        let fetcher = try FetcherApp(env, settings: ["transferRetryInitialSeconds": 60])
        let silent = try UnansweredPort.silent()
        defer { silent.close() }
        let refusing = try UnansweredPort.refusing()
        defer { refusing.close() }
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // The silent host first: it waits for the scheduler's connect timeout (15 s), so while
        // it is still `running` nothing has waited that long.
        #expect(try fetcher.download("silent", silent.url("/file")).status == 0)
        try await env.eventually("the silent download to start") { fetcher.transfer("silent")?.state == .running }
        #expect(try fetcher.download("refused", refusing.url("/file")).status == 0)
        try await env.eventually("the refused download to fail") { (fetcher.transfer("refused")?.retries ?? 0) >= 1 }

        let refused = try #require(fetcher.transfer("refused"))
        #expect(refused.lastError == "could not connect: connection refused")
        let retrying = try #require(env.events(.transferRetrying).first { $0.identifier?.rawValue == "refused" })
        #expect(retrying.message.contains("failed (could not connect: connection refused); retry 1 in"), "\(retrying.message)")
        // A transient failure: the record waits for its retry, which is scheduled.
        #expect(refused.state == .waiting)
        #expect(refused.retryAt != nil)
        #expect(refused.retries == 1)
        #expect(fetcher.transfer("silent")?.state == .running, "the silent host is still being given its connect timeout")
        #expect(fetcher.transfer("silent")?.retries == 0)
    }
}
