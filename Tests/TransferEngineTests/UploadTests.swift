import Foundation
import LoopbackServer
import TaskState
import Testing
import TransferEngine

@Suite("Uploads")
struct UploadTests {
    @Test("an uploaded file arrives byte-exact at the server", arguments: [TransferJob.UploadMethod.put, .post])
    func uploadArrivesExact(method: TransferJob.UploadMethod) async throws {
        try await withFixture { fixture in
            let source = fixture.appFolder + "/photo.jpg"
            let size: Int64 = 3 * 1024 * 1024 + 77
            try await writeGenerated(GeneratedBytes(size: size, seed: 11), to: source)
            let saved = fixture.root + "/received.bin"
            fixture.server.setRoute("/upload", Route(.uploadTarget(saveTo: saved)))
            let job = TransferJob.upload(fixture.key("up"), to: fixture.server.url("/upload"), sourceFile: source, method: method,
                                         timeoutIntervalForRequest: 3600)
            let events = try await runAttempt(fixture.engine, job)
            #expect(events.final == .completed(statusCode: 201))
            let received = try #require(fixture.server.receivedUpload("/upload"))
            let expected = try await sha256sum(source)
            #expect(received.method == method.rawValue)
            #expect(received.isComplete)
            #expect(received.byteCount == size)
            #expect(received.sha256 == expected)
            #expect(try await sha256sum(saved) == expected)
            #expect(events.last?.progress.bytesTransferred == size)
            #expect(events.last?.progress.bytesExpected == size)
        }
    }

    @Test("an upload answered with 500 is a transient failure; a missing source is permanent")
    func uploadFailures() async throws {
        try await withFixture { fixture in
            let source = fixture.appFolder + "/note.txt"
            try Data("hello".utf8).write(to: URL(fileURLWithPath: source))
            // An hour without progress before the watchdog: a CI run whose test pool was starved for
            // minutes saw the default 60 s fire before the 500 was read.
            let rejected = try await runAttempt(fixture.engine,
                                                TransferJob.upload(fixture.key("up"), to: fixture.server.url("/u?status=500"), sourceFile: source,
                                                                   timeoutIntervalForRequest: 3600))
            #expect(rejected.final == .failed(.httpStatus(500)))
            let missing = try await runAttempt(fixture.engine,
                                               TransferJob.upload(fixture.key("up"), to: fixture.server.url("/u"), sourceFile: source + ".gone"))
            guard case .failed(let failure) = missing.final else {
                Issue.record("expected a failure, got \(String(describing: missing.final))")
                return
            }
            #expect(failure.name == "sourceUnreadable")
            #expect(!failure.isTransient)
        }
    }
}
