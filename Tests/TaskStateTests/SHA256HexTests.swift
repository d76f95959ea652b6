import Foundation
import Testing
import TaskState

/// The `sha256` of transfers: what counts as a digest, and how the field travels on disk.
@Suite("SHA-256 digests of downloads")
struct SHA256HexTests {
    static let digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    @Test("64 hex digits in either case are accepted and kept lowercase")
    func accepted() throws {
        #expect(try SHA256Hex(validating: Self.digest).rawValue == Self.digest)
        #expect(try SHA256Hex(validating: Self.digest.uppercased()).rawValue == Self.digest)
        #expect(try SHA256Hex(validating: String(repeating: "0", count: 64)).rawValue == String(repeating: "0", count: 64))
    }

    @Test("anything else is refused with a reason that does not repeat the value")
    func refused() {
        #expect(throws: SHA256HexError.wrongLength(0)) { try SHA256Hex(validating: "") }
        #expect(throws: SHA256HexError.wrongLength(63)) { try SHA256Hex(validating: String(Self.digest.dropLast())) }
        #expect(throws: SHA256HexError.wrongLength(65)) { try SHA256Hex(validating: Self.digest + "0") }
        #expect(throws: SHA256HexError.notHexadecimal(position: 1, character: "'g'")) {
            try SHA256Hex(validating: "g" + Self.digest.dropFirst())
        }
        #expect(throws: SHA256HexError.notHexadecimal(position: 64, character: "byte 0x0A")) {
            try SHA256Hex(validating: Self.digest.dropLast() + "\n")
        }
        #expect(throws: SHA256HexError.notHexadecimal(position: 3, character: "a space")) {
            try SHA256Hex(validating: "9f " + Self.digest.dropFirst(3))
        }
        // Counted in bytes: 32 two-byte characters are 64 bytes, none of them a digit.
        #expect(throws: SHA256HexError.notHexadecimal(position: 1, character: "byte 0xC3")) {
            try SHA256Hex(validating: String(repeating: "é", count: 32))
        }
        #expect(throws: SHA256HexError.wrongLength(65)) { try SHA256Hex(validating: String(repeating: "é", count: 32) + "0") }
        #expect(SHA256HexError.wrongLength(3).description == "a SHA-256 digest is 64 hexadecimal digits, not 3 characters")
        #expect(SHA256HexError.notHexadecimal(position: 5, character: "'z'").description
                == "a SHA-256 digest is 64 hexadecimal digits; character 5 is 'z'")
    }

    @Test("a transferCreate carries sha256 on disk, and one written without it still reads")
    func onTheWire() throws {
        let request = TransferRequest(app: ident("com.example.news"), identifier: ident("edition"), direction: .download,
                                      url: "https://example.com/e.zip", destination: "e.zip", sha256: Self.digest)
        let command = Command(issuedAt: Date(timeIntervalSince1970: 1_800_000_000), action: .transferCreate(request))
        let data = try JSONFormat.encode(command)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["sha256"] as? String == Self.digest)
        #expect(try JSONFormat.decode(Command.self, from: data) == command)

        // As an older bgctl (or another program) writes it: no sha256 field.
        let old = Data("""
        {"id":"0000000000000001-0000000000000001","issuedAt":"2026-11-22T10:00:00.000Z","type":"transferCreate",
         "app":"com.example.news","identifier":"edition","direction":"download","url":"https://example.com/e.zip",
         "destination":"e.zip"}
        """.utf8)
        guard case .transferCreate(let decoded) = try JSONFormat.decode(Command.self, from: old).action else {
            Issue.record("not a createTransfer")
            return
        }
        #expect(decoded.sha256 == nil)
    }

    @Test("a transfer record keeps sha256, and an older record without it reads")
    func inTheRecord() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let record = TransferRecord(app: ident("com.example.news"), identifier: ident("edition"), direction: .download,
                                    url: "https://example.com/e.zip", state: .waiting, createdAt: now, updatedAt: now,
                                    destination: "e.zip", sha256: Self.digest)
        let data = try JSONFormat.encode(record)
        #expect(try JSONFormat.decode(TransferRecord.self, from: data) == record)
        var older = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        older["sha256"] = nil
        let decoded = try JSONFormat.decode(TransferRecord.self, from: try JSONSerialization.data(withJSONObject: older))
        #expect(decoded.sha256 == nil)
        #expect(decoded.destination == "e.zip")
    }
}
