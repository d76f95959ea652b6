import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// Credentials in a transfer's or a push subscription's URL are secrets like a secret header's
/// value: the record and the manifest keep the URL whole, and nothing that shows or logs it
/// prints them.
@Suite struct TransferURLCredentialsTests {
    static let password = "pa55-w0rd-Zq"

    @Test func aURLsPasswordIsKeptInTheRecordAndNeverShown() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let server = try await LoopbackServer.start(routes: ["/private": Route(.generated(size: 100_000, seed: 43))])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let url = "http://ana:\(Self.password)@127.0.0.1:\(server.port)/private"
        let shown = "http://redacted@127.0.0.1:\(server.port)/private"
        let created = try fetcher.download("private", url)
        #expect(created.status == 0, "\(created)")
        try await env.eventually("the transfer to end", timeout: 30) {
            [TransferRecord.State.completed, .failed].contains(fetcher.transfer("private")?.state)
        }
        #expect(fetcher.transfer("private")?.url == url, "the record keeps the URL whole")

        let transfer = try #require((try env.list()["transfers"] as? [[String: Any]])?.first)
        #expect(transfer["url"] as? String == shown)
        let creation = try #require(env.events(.transferCreated).first)
        #expect(creation.message.contains(shown), "\(creation.message)")
        let outputs = [
            ("bgctl transfer download", created),
            ("bgctl list", try env.bgctl("list")),
            ("bgctl list --json", try env.bgctl("list", "--json")),
            ("bgctl events", try env.bgctl("events")),
            ("bgtop --batch", try env.run(TestEnvironment.binaries + "/bgtop", ["--batch", "--state", env.state, "--config", env.config])),
            ("bgctl watch --json", try env.run(TestEnvironment.binaries + "/bgctl", ["watch", "--json", "--state", env.state, "--config", env.config])),
        ]
        for (name, output) in outputs {
            #expect(output.status == 0, "\(name): \(output)")
            #expect(!output.stdout.contains(Self.password) && !output.stderr.contains(Self.password), "\(name) shows the password")
        }
        #expect(outputs[5].1.stdout.contains("//redacted@127.0.0.1"), "the feed a remote bgtop reads names the URL without its password")
        let log = FileManager.default.contents(atPath: env.paths.events).map { String(decoding: $0, as: UTF8.self) } ?? ""
        #expect(!log.isEmpty && !log.contains(Self.password), "no password in events.jsonl")
        await server.shutdown()
    }

    /// A push subscription's URL with credentials: `bgctl apps` (text and JSON), the feed a remote
    /// bgtop reads, and a manifest error about a bad one show none of them.
    @Test func aPushSubscriptionsCredentialsAreNeverShown() throws {
        let env = try TestEnvironment()
        try PushSubscriptionTests.addSubscribedApp(env, url: "http://ana:\(Self.password)@127.0.0.1:9/alerts")
        // A second app whose subscription is refused (a query): its manifest error names the URL.
        try env.writeJSON(["id": "com.example.badpush", "executable": "/bin/true", "permittedIdentifiers": ["com.example.badpush.refresh"],
                           "backgroundModes": ["fetch", "remote-notification"],
                           "push": [["ntfy": "http://ana:\(Self.password)@127.0.0.1:9/alerts?x=1"]]],
                          to: "\(env.config)/apps/com.example.badpush.json")
        let outputs = [
            ("bgctl apps", try env.bgctl("apps")),
            ("bgctl apps --json", try env.bgctl("apps", "--json")),
            ("bgctl watch --json", try env.run(TestEnvironment.binaries + "/bgctl", ["watch", "--json", "--state", env.state, "--config", env.config])),
        ]
        for (name, output) in outputs {
            #expect(!output.stdout.contains(Self.password) && !output.stderr.contains(Self.password), "\(name) shows the password: \(output)")
            #expect(output.stdout.contains("http://redacted@127.0.0.1:9/alerts"), "\(name) names the subscription: \(output)")
        }
        #expect(outputs[0].1.stdout.contains("redacted@127.0.0.1:9/alerts?x=1"), "the manifest error names the URL: \(outputs[0].1)")
    }
}
