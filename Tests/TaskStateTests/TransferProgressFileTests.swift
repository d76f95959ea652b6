import Foundation
import TaskState
import Testing

/// `<id>.progress` stands for its record only when it is readable, the same transfer, and newer.
@Suite struct TransferProgressFileTests {
    private func record(bytes: Int64, updated: TimeInterval, identifier: String = "episode") -> TransferRecord {
        TransferRecord(app: ident("com.example.news"), identifier: ident(identifier), direction: .download,
                       url: "http://127.0.0.1/e", state: .running, bytesTransferred: bytes,
                       createdAt: referenceDate, updatedAt: referenceDate.addingTimeInterval(updated))
    }

    private func withProgressFile(_ contents: Data, _ body: (String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.path + "/bgtop-progress-\(UUID().uuidString).progress"
        try contents.write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        try body(path)
    }

    @Test func aNewerProgressFileWins() throws {
        try withProgressFile(try JSONFormat.encode(record(bytes: 900, updated: 5))) { path in
            #expect(TransferRecord.newest(record(bytes: 100, updated: 1), progressFile: path).bytesTransferred == 900)
        }
    }

    @Test func anOlderOneForAnotherTransferOrATornOneIsIgnored() throws {
        try withProgressFile(try JSONFormat.encode(record(bytes: 900, updated: 0))) { path in
            #expect(TransferRecord.newest(record(bytes: 100, updated: 1), progressFile: path).bytesTransferred == 100)
        }
        try withProgressFile(try JSONFormat.encode(record(bytes: 900, updated: 5, identifier: "other"))) { path in
            #expect(TransferRecord.newest(record(bytes: 100, updated: 1), progressFile: path).bytesTransferred == 100)
        }
        try withProgressFile(Data("{\"app\": \"com.exa".utf8)) { path in
            #expect(TransferRecord.newest(record(bytes: 100, updated: 1), progressFile: path).bytesTransferred == 100)
        }
        #expect(TransferRecord.newest(record(bytes: 100, updated: 1), progressFile: "/nonexistent/x.progress").bytesTransferred == 100)
    }
}

#if canImport(Glibc)
import Glibc
#endif
