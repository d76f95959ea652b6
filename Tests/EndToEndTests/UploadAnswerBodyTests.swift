import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// An upload the server took is completed even when the start of its answer cannot be kept
/// (a full disk, or here a directory in the way), and the kept answer lives beside the transfer's
/// record, where no download of the app can be overwritten by it.
@Suite struct UploadAnswerBodyTests {
    @Test func anUploadTheServerTookIsNotFailedBecauseItsAnswerCannotBeKept() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let received = env.root + "/received.bin"
        let server = try await LoopbackServer.start(routes: ["/up": Route(.uploadTarget(saveTo: received))])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // Something in the way of the answer's file: here a folder; in real life, a full disk.
        try FileManager.default.createDirectory(atPath: env.paths.uploadResponseBody(fetcher.key("up")), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let source = env.root + "/photo.bin"
        try Data(repeating: 7, count: 20_000).write(to: URL(fileURLWithPath: source))
        let handed = try env.bgctl("transfer", "upload", "--app", FetcherApp.id, "--id", "up", server.url("/up"), source)
        #expect(handed.status == 0, "\(handed)")
        try await env.eventually("the upload to end", timeout: 30) { fetcher.transfer("up").map { !$0.state.isActive } == true }
        #expect(server.receivedUpload("/up")?.byteCount == 20_000, "the server took the whole upload")
        let record = try #require(fetcher.transfer("up"))
        #expect(record.state == .completed, "taken by the server, yet \(record.state.rawValue): \(record.lastError ?? "-")")
        #expect(record.responseStatusCode != nil && record.responseBodyFile == nil, "completed without the answer's body")
        // The app acknowledges it: the commit that removes the record is not stopped by the folder.
        let key = fetcher.key("up")
        try Inbox(paths: env.paths).enqueue(Command(issuedAt: Date(), action: .transferAcknowledge(app: key.app, identifier: key.identifier)))
        try await env.eventually("the record to go", timeout: 20) { fetcher.transfer("up") == nil }
        #expect(daemon.isRunning)
        #expect(try env.bgctl("status").status == 0)
        await server.shutdown()
    }

    /// An upload `up` leaves the app's finished download named `up.response` alone.
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
