import Crypto
import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// `BGURLSession.downloadTask(with:expectedSHA256:)`: the app asks for the digest, the real
/// scheduler checks it, and the app hears how it went when it is launched for its session.
@Suite struct ChecksumSessionTests {
    /// The SHA-256 of `GeneratedBytes(size:seed:)`, by swift-crypto.
    private func digest(size: Int64, seed: UInt64) -> String {
        SHA256.hash(data: GeneratedBytes(size: size, seed: seed).bytes(0..<size)).hexDigest
    }

    @Test func aDownloadWithTheWrongDigestReachesTheAppAsAFailureNamingBothDigests() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "session")
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let size: Int64 = 200_000
        let actual = digest(size: size, seed: 41)
        let wrong = digest(size: size, seed: 42)

        let handed = try env.runFixture(["session", "download", server.url("/generated/\(size)?seed=41"), "--sha256=\(wrong.uppercased())"])
        #expect(handed.status == 0, "\(handed)")
        let handedOver = try #require(env.fixtureEvents("handed-over").first)
        try await env.eventually("the app to hear how it ended", timeout: 15) { !env.fixtureEvents("session-complete").isEmpty }
        let complete = try #require(env.fixtureEvents("session-complete").first)
        #expect(complete.identifier == handedOver.identifier)
        #expect(complete.detail == "the download's SHA-256 is \(actual), not the expected \(wrong)")
        #expect(env.fixtureEvents("downloaded").isEmpty, "no file was delivered")
        let downloads = (try? FileManager.default.contentsOfDirectory(atPath: "\(env.state)/downloads/\(TestEnvironment.fixtureID)")) ?? []
        #expect(downloads.isEmpty)
        await server.shutdown()
    }

    @Test func aDownloadWithTheRightDigestIsDelivered() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "session")
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let size: Int64 = 200_000

        let handed = try env.runFixture(["session", "download", server.url("/generated/\(size)?seed=43"),
                                         "--sha256=\(digest(size: size, seed: 43))"])
        #expect(handed.status == 0, "\(handed)")
        try await env.eventually("the app to hear the download is done", timeout: 15) { !env.fixtureEvents("session-complete").isEmpty }
        #expect(env.fixtureEvents("session-complete").first?.detail == "ok")
        let downloaded = try #require(env.fixtureEvents("downloaded").first)
        #expect(downloaded.detail.hasSuffix(" \(size)"))
        await server.shutdown()
    }
}
