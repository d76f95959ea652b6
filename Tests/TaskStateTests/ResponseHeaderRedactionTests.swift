import Foundation
import TaskState
import Testing

/// a completed transfer's `responseHeaders` leave the
/// state directory through ``TransferRecord/redacted`` (`bgctl watch --json`, a remote bgtop)
/// with every value, although a server may answer with a credential: a refreshed
/// `Authorization`, or a field the app itself named secret (OpenStack Keystone's
/// `X-Subject-Token`). Only `Set-Cookie` is dropped.
@Suite struct ResponseHeaderRedactionTests {
    @Test func secretResponseFieldsDoNotLeaveThroughTheRedactedRecord() throws {
        var record = TransferRecord(app: try Identifier(validating: "com.example.cloud"), identifier: try Identifier(validating: "token"),
                                    direction: .download, url: "https://keystone.example.com/v3/auth/tokens", state: .completed,
                                    createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
        record.secretHeaderNames = ["X-Subject-Token"]
        record.responseStatusCode = 201
        record.responseHeaders = [TransferHeader(name: "X-Subject-Token", value: "gAAAAAB-s3cr3t"),
                                  TransferHeader(name: "Authorization", value: "Bearer s3cr3t-refreshed"),
                                  TransferHeader(name: "Content-Type", value: "application/json")]
        let shown = String(decoding: try JSONEncoder().encode(record.redacted), as: UTF8.self)
        #expect(!shown.contains("s3cr3t"), "\(shown)")
    }
}
