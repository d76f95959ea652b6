import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// Review of issue 18 (branch `review18`): the engine keeps the start of every upload's answer
/// body in `downloads/<app>/<id>.response` and fails the transfer *for good* when it cannot write
/// it (`TransferFailure.fileSystem` is permanent), although the server took the upload. A full
/// disk gives the same. Fails on main.
@Suite struct UploadAnswerBodyReviewTests {
    @Test func anUploadTheServerTookIsNotFailedBecauseItsAnswerCannotBeKept() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let received = env.root + "/received.bin"
        let server = try await LoopbackServer.start(routes: ["/up": Route(.uploadTarget(saveTo: received))])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // Something in the way of the answer's file: here a folder; in real life, a full disk.
        let folder = "\(env.state)/downloads/\(FetcherApp.id)"
        try FileManager.default.createDirectory(atPath: "\(folder)/up.response", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let source = env.root + "/photo.bin"
        try Data(repeating: 7, count: 20_000).write(to: URL(fileURLWithPath: source))
        let handed = try env.bgctl("transfer", "upload", "--app", FetcherApp.id, "--id", "up", server.url("/up"), source)
        #expect(handed.status == 0, "\(handed)")
        try await env.eventually("the upload to end", timeout: 30) { fetcher.transfer("up").map { !$0.state.isActive } == true }
        #expect(server.receivedUpload("/up")?.byteCount == 20_000, "the server took the whole upload")
        let record = try #require(fetcher.transfer("up"))
        #expect(record.state == .completed, "taken by the server, yet \(record.state.rawValue): \(record.lastError ?? "-")")
        await server.shutdown()
    }

    /// `downloads/<app>/<id>.response` shares the app's downloads folder with its downloads: an
    /// upload `up` overwrites the finished download the app named `up.response` (and is never
    /// removed for an upload nobody awaits). Fails on main.
    @Test func anUploadsAnswerDoesNotOverwriteADownloadOfTheApp() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let server = try await LoopbackServer.start(routes: ["/up": Route(.uploadTarget(saveTo: env.root + "/received.bin"))])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let size: Int64 = 5_000
        #expect(try env.bgctl("transfer", "download", "--app", FetcherApp.id, "--id", "report", server.url("/generated/\(size)?seed=5"),
                              "--to", "up.response").status == 0)
        try await env.eventually("the download to complete", timeout: 30) { fetcher.transfer("report")?.state == .completed }
        let path = "\(env.state)/downloads/\(FetcherApp.id)/up.response"
        let expected = Data(GeneratedBytes(size: size, seed: 5).bytes(0..<size))
        #expect(FileManager.default.contents(atPath: path) == expected)

        let source = env.root + "/photo.bin"
        try Data(repeating: 7, count: 20_000).write(to: URL(fileURLWithPath: source))
        #expect(try env.bgctl("transfer", "upload", "--app", FetcherApp.id, "--id", "up", server.url("/up"), source).status == 0)
        try await env.eventually("the upload to end", timeout: 30) { fetcher.transfer("up").map { !$0.state.isActive } == true }
        #expect(fetcher.transfer("up")?.state == .completed)
        #expect(FileManager.default.contents(atPath: path) == expected, "the app's download was replaced by the upload's answer")
        await server.shutdown()
    }
}
