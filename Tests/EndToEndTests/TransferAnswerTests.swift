import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// `bgctl transfer download --ask-before-begin` and `bgctl transfer answer`: a program in any
/// language is asked before its delayed transfer begins, and answers from the shell.
@Suite struct TransferAnswerTests {
    @Test func aProgramAnswersWithBgctlAndTheChangedRequestGoesOut() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env, settings: ["delayedRequestAnswerSeconds": 600])
        let size: Int64 = 30_000
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let created = try fetcher.download("asked", server.url("/generated/\(size)?seed=7"), "--earliest", "+1",
                                           "--ask-before-begin", "--header", "Authorization: Bearer stale-t0ken")
        #expect(created.status == 0, "\(created)")
        try await env.eventually("the scheduler to ask", timeout: 20) { fetcher.transfer("asked")?.delayedRequestAskedAt != nil }
        #expect(fetcher.transfer("asked")?.state == .waiting)
        #expect(env.events(.launched).isEmpty, "a transfer without launch events launches nothing to ask")
        let listed = try env.bgctl("list")
        #expect(listed.stdout.contains("waiting (asking app until "), "\(listed)")
        let json = try env.list()
        let row = try #require((json["transfers"] as? [[String: Any]])?.first)
        #expect(row["blockers"] as? [String] == ["awaitingAnswer"])
        #expect(row["delayedRequestAnswerBy"] != nil)

        // Bad answers: one line each, nothing changed.
        let unknown = try env.bgctl("transfer", "answer", "asked", "maybe")
        #expect(unknown.status == 2 && unknown.stderr.contains("bad answer 'maybe': expected continue, cancel or new"), "\(unknown)")
        let bare = try env.bgctl("transfer", "answer", "asked", "new")
        #expect(bare.status == 2 && bare.stderr.contains("'new' needs --url, --header, or both"), "\(bare)")
        let notHTTP = try env.bgctl("transfer", "answer", "asked", "new", "--url", "file:///etc/passwd")
        #expect(notHTTP.status == 1 && notHTTP.stderr.contains("'file:///etc/passwd' is not an http or https URL"), "\(notHTTP)")
        let injected = try env.bgctl("transfer", "answer", "asked", "new", "--header", "X-A: b\rc")
        #expect(injected.status == 2, "\(injected)")
        let nobody = try env.bgctl("transfer", "answer", "missing", "continue")
        #expect(nobody.status == 2 && nobody.stderr.contains("no transfer with identifier missing"), "\(nobody)")
        #expect(fetcher.transfer("asked")?.delayedRequestOutcome == nil)

        let answered = try env.bgctl("transfer", "answer", "asked", "new", "--url", server.url("/generated/\(size)?seed=8"),
                                     "--header", "Authorization: Bearer fresh-t0ken")
        #expect(answered.status == 0, "\(answered)")
        try await env.eventually("the changed download to finish", timeout: 30) { fetcher.transfer("asked")?.state == .completed }
        #expect(fetcher.downloaded("asked") == Data(GeneratedBytes(size: size, seed: 8).bytes(0..<size)))
        let seen = server.requests(for: "/generated/\(size)")
        #expect(seen.map(\.target) == ["/generated/\(size)?seed=8"])
        #expect(seen.first?.values("Authorization") == ["Bearer fresh-t0ken"])
        #expect(fetcher.transfer("asked")?.delayedRequestOutcome == .changed)

        let again = try env.bgctl("transfer", "answer", "asked", "cancel")
        #expect(again.status == 1 && again.stderr.contains("no active transfer with identifier asked"), "\(again)")
        let shown = try env.bgctl("list", "--json")
        let log = String(decoding: FileManager.default.contents(atPath: env.paths.events) ?? Data(), as: UTF8.self)
        for text in [shown.stdout, log] { #expect(!text.contains("t0ken"), "no secret shown") }
        #expect(env.events(.transferAnswered).map(\.reason) == ["new"])
        await server.shutdown()
    }

    @Test func askingNeedsADelayedTransfer() throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let refused = try fetcher.download("now", "http://127.0.0.1:9/x", "--ask-before-begin")
        #expect(refused.status == 2 && refused.stderr.contains("--ask-before-begin needs --earliest"), "\(refused)")
    }
}
