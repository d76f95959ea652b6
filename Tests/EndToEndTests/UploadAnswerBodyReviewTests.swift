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
}
