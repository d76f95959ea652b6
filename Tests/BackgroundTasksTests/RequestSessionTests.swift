import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// `BGURLSession.downloadTask(with: URLRequest)`: the app's request headers reach the server
/// through the real scheduler, are shown as `redacted`, and a bad one is refused in the app.
@Suite struct RequestSessionTests {
    @Test func aURLRequestsHeadersReachTheServerAndItsSecretsAreRedacted() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "session")
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let size: Int64 = 50_000
        let handed = try env.runFixture(["session", "download", server.url("/generated/\(size)?seed=44"),
                                         "--bearer=lib-t0ken-9", "--api-key=lib-k3y-7"])
        #expect(handed.status == 0, "\(handed)")
        try await env.eventually("the app to hear the download is done", timeout: 15) { !env.fixtureEvents("session-complete").isEmpty }
        #expect(env.fixtureEvents("session-complete").first?.detail == "ok")
        let request = try #require(server.requests(for: "/generated/\(size)").first)
        #expect(request.method == "GET")
        #expect(request.values("Authorization") == ["Bearer lib-t0ken-9"])
        #expect(request.values("X-Api-Key") == ["lib-k3y-7"])
        #expect(request.values("X-Trace") == ["fixture"])
        let events = String(decoding: FileManager.default.contents(atPath: env.paths.events) ?? Data(), as: UTF8.self)
        #expect(!events.isEmpty && !events.contains("lib-t0ken-9") && !events.contains("lib-k3y-7"))
        await server.shutdown()
    }

    @Test func aRequestWithABadHeaderOrMethodIsRefusedInTheAppWithoutItsValue() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "session")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let url = "http://127.0.0.1:9/never"
        // (swift-corelibs-foundation's URLRequest itself drops a value with CR, LF or NUL.)
        #expect(try env.runFixture(["session", "download", url, "--api-key=t0ken" + String(repeating: "k", count: 9000)]).status == 0)
        let source = "\(env.state)/../upload.txt"
        try Data("body".utf8).write(to: URL(fileURLWithPath: source))
        // URLRequest's default method, GET, cannot carry an upload.
        #expect(try env.runFixture(["session", "upload", url, source, "--bearer=t0ken"]).status == 0)
        let refusals = env.fixtureEvents("session-complete").map(\.detail)
        #expect(refusals.count == 2, "\(env.fixtureEvents())")
        #expect(refusals.first?.contains("header X-Api-Key is 9005 bytes; a value may have at most 8192") == true, "\(refusals)")
        #expect(refusals.last?.contains("method 'GET' is not one an upload may use (PUT, POST, PATCH)") == true, "\(refusals)")
        #expect(!refusals.contains { $0.contains("t0ken") })
        #expect(env.events(.transferCreated).isEmpty, "nothing reached the scheduler")
    }
}
