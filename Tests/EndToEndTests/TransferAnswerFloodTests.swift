import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// A `transferAnswer` of some 56 KB (8000 distinct `secretHeaders`), as any program may write it,
/// is refused with the rule's line and the real scheduler goes on answering.
@Suite struct TransferAnswerFloodTests {
    @Test func aFloodedAnswerIsRefusedAndTheSchedulerGoesOn() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: ["delayedRequestAnswerSeconds": 600])
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try fetcher.download("asked", server.url("/generated/1000?seed=1"), "--earliest", "+1", "--ask-before-begin").status == 0)
        try await env.eventually("the scheduler to ask", timeout: 20) { fetcher.transfer("asked")?.delayedRequestAskedAt != nil }

        let app = try Identifier(validating: FetcherApp.id), id = try Identifier(validating: "asked")
        let names = (0..<8000).map { "x\(String($0, radix: 36))" }
        let flood = Command(issuedAt: Date(), action: .transferAnswer(DelayedRequestAnswer(
            app: app, identifier: id, disposition: .new, url: server.url("/generated/1000?seed=2"), secretHeaderNames: names)))
        // Compact JSON, as any program may write it: the pretty-printed form is over the 64 KiB cap.
        let pretty = try JSONFormat.encode(flood)
        let compact = try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: pretty))
        #expect(compact.count < 64 << 10, "\(compact.count) bytes")
        try StateFiles.create(compact, at: "\(env.paths.inboxTemporary)/\(flood.id).json", durable: true)
        try StateFiles.move("\(env.paths.inboxTemporary)/\(flood.id).json", to: "\(env.paths.inboxNew)/\(flood.id).json")
        try await env.eventually("the flooded answer to be refused", timeout: 120) { StateFiles.exists(env.paths.outcome(flood.id)) }

        let plain = Command(issuedAt: Date(), action: .transferAnswer(DelayedRequestAnswer(
            app: app, identifier: id, disposition: .new, url: "ftp://127.0.0.1/x", secretHeaderNames: ["X-Key"])))
        try Inbox(paths: env.paths).enqueue(plain)
        try await env.eventually("the plain bad answer to be refused", timeout: 30) { StateFiles.exists(env.paths.outcome(plain.id)) }
        let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(flood.id)))
        #expect(outcome.error?.message == "8000 secret header names; at most 64", "\(String(describing: outcome.error))")
        #expect(fetcher.transfer("asked")?.delayedRequestOutcome == nil, "both refused")
        #expect(try env.bgctl("transfer", "answer", "asked", "cancel").status == 0)
        await server.shutdown()
    }
}
