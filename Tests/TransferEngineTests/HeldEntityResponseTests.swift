import Foundation
import LoopbackServer
import TaskState
import Testing
import TransferEngine

/// the response `download(for:)` returns for a download
/// completed by a `416` (the held bytes were already the whole entity) is the 416's own header
/// fields under status 200 — `Content-Range: bytes */N` and the 416's `Content-Length` and
/// `Content-Type` — not the whole entity's, unlike the `206` case (``FinalResponse/whole``).
///
@Suite struct HeldEntityResponseTests {
    @Test("a download completed by a 416 reports the whole entity's Content-Length and no Content-Range")
    func rangeNotSatisfiableReportsTheWholeEntity() async throws {
        try await withFixture { fixture in
            let bytes = GeneratedBytes(size: 50_000, seed: 9)
            fixture.server.setRoute("/done", Route(.generated(size: 50_000, seed: 9)))
            let key = fixture.key("done")
            try await writeGenerated(bytes, to: fixture.paths.transferPartialData(key))
            try fixture.recordValidator("done", ResumeValidator(etag: "\"g9-50000\""))
            let events = try await runAttempt(fixture.engine, fixture.download("done", "/done"))
            #expect(events.final == .completed(statusCode: 200))
            #expect(fixture.server.requests(for: "/done").map(\.status) == [416])
            let response = try #require(events.last?.response)
            #expect(response.statusCode == 200)
            let fields = Dictionary(response.headers.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
            #expect(fields["content-range"] == nil, "a 200 with \(fields["content-range"] ?? "")")
            #expect(fields["content-length"] == "50000", "the file is 50000 bytes; the response says \(fields["content-length"] ?? "nothing")")
        }
    }
}
