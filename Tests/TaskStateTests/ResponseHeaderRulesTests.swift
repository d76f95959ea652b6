import Foundation
import TaskState
import Testing

@Suite("Response headers kept on a completed transfer's record")
struct ResponseHeaderRulesTests {
    @Test("Set-Cookie is never kept, in any case; oversized values and fields past the limit are dropped; order stays")
    func kept() {
        let fields = [
            TransferHeader(name: "Content-Type", value: "application/json"),
            TransferHeader(name: "Set-Cookie", value: "session=SECRET"),
            TransferHeader(name: "set-cookie", value: "other=SECRET"),
            TransferHeader(name: "SET-COOKIE2", value: "old=SECRET"),
            TransferHeader(name: "X-Huge", value: String(repeating: "h", count: ResponseHeaderRules.valueLimit + 1)),
            TransferHeader(name: "ETag", value: "\"v1\""),
        ]
        let kept = ResponseHeaderRules.kept(fields)
        #expect(kept.map(\.name) == ["Content-Type", "ETag"])
        #expect(!kept.contains { $0.value.contains("SECRET") })
        let many = (0..<100).map { TransferHeader(name: "X-\($0)", value: "\($0)") }
        #expect(ResponseHeaderRules.kept(many) == Array(many.prefix(ResponseHeaderRules.fieldLimit)))
    }

    @Test("a record with response fields reads back; an older record without them reads as nil")
    func recordFields() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var record = TransferRecord(app: try Identifier(validating: "com.example.app"), identifier: try Identifier(validating: "t1"),
                                    direction: .upload, url: "http://127.0.0.1/x", state: .completed, createdAt: now, updatedAt: now)
        let older = try JSONFormat.decode(TransferRecord.self, from: try JSONFormat.encode(record))
        #expect(older.responseStatusCode == nil && older.responseHeaders == nil && older.responseBodyFile == nil)
        record.responseStatusCode = 201
        record.responseHeaders = [TransferHeader(name: "Location", value: "/x/1")]
        record.responseBodyFile = "t1.response"
        #expect(try JSONFormat.decode(TransferRecord.self, from: try JSONFormat.encode(record)) == record)
    }
}
