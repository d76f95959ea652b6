import Foundation
import Testing
import SchedulerCore
import TaskState

/// `createTransfer` and the `sha256` of a download: the scheduler checks it itself, because any
/// program may write the inbox.
@Suite("TransferPolicy: sha256")
struct TransferChecksumPolicyTests {
    static let digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    @Test("a download's sha256 is recorded lowercase, whichever case it came in")
    func recorded() throws {
        var state = makeState()
        let result = create(&state, request("upper", sha256: Self.digest.uppercased()))
        #expect(result.outcome.error == nil)
        #expect(state.transfers[key("upper")]?.sha256 == Self.digest)
        create(&state, request("none"))
        #expect(state.transfers[key("none")]?.sha256 == nil)
    }

    @Test("a malformed sha256, or one on an upload, is refused as invalidCommand and nothing is created",
          arguments: [
              ("", "bad sha256: a SHA-256 digest is 64 hexadecimal digits, not 0 characters"),
              ("abc", "bad sha256: a SHA-256 digest is 64 hexadecimal digits, not 3 characters"),
              (String(repeating: "x", count: 64), "bad sha256: a SHA-256 digest is 64 hexadecimal digits; character 1 is 'x'"),
              (String(digest.dropLast()) + "\u{0}", "bad sha256: a SHA-256 digest is 64 hexadecimal digits; character 64 is byte 0x00"),
          ])
    func malformed(value: String, message: String) {
        var state = makeState()
        _ = state.takeChanges()
        let result = create(&state, request("bad", sha256: value))
        #expect(result.errorName == "invalidCommand")
        #expect(result.errorMessage == message)
        #expect(state.transfers.isEmpty)
        #expect(state.takeChanges().eventTypes == [.refused])
    }

    @Test("an upload with a sha256 is refused")
    func upload() {
        var state = makeState()
        let upload = TransferRequest(app: Apps.news, identifier: ident("up"), direction: .upload,
                                     url: "http://127.0.0.1:8080/put/up", sourceFile: "/tmp/upload.bin", sha256: Self.digest)
        let result = create(&state, upload)
        #expect(result.errorName == "invalidCommand")
        #expect(result.errorMessage == "sha256 is checked on downloads only, not on an upload")
        #expect(state.transfers.isEmpty)
    }

    @Test("the record handed to the runtime carries the sha256")
    func started() throws {
        var state = makeState()
        create(&state, request("dl", sha256: Self.digest))
        let started = state.dueTransfers(at: t0).compactMap { action -> TransferRecord? in
            if case .start(let record) = action { return record }
            return nil
        }
        #expect(started.map(\.sha256) == [Self.digest])
    }

    // MARK: - Helpers

    private func request(_ name: String, sha256: String? = nil) -> TransferRequest {
        TransferRequest(app: Apps.news, identifier: ident(name), direction: .download,
                        url: "http://127.0.0.1:8080/\(name)", destination: "\(name).bin", sha256: sha256)
    }

    private func key(_ name: String) -> TaskKey { TaskKey(app: Apps.news, identifier: ident(name)) }

    @discardableResult
    private func create(_ state: inout SchedulerState, _ request: TransferRequest) -> CommandResult {
        state.apply(Command(id: Command.newID(at: t0), issuedAt: t0, issuerPID: 1, action: .transferCreate(request)), now: t0)
    }
}
