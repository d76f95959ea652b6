import Foundation
import Testing
import SchedulerCore
import TaskState

/// The scheduler's own check of every number a command carries (TaskState/NumericBounds.swift,
/// applied first thing in `SchedulerState.apply`): out of range is `invalidCommand` with the
/// field, the value and the range; nothing changes but the `refused` event.
@Suite("CommandBounds")
struct CommandBoundsTests {
    static let hostileSeconds: [Double] = [0, -1, 1e300, -1e300, .nan, .infinity, -.infinity, -0.0, 0.5, 2e9]

    private func download(_ id: String, request: Double? = nil, resource: Double? = nil, bytes: Int64? = nil,
                          earliest: Date? = nil) -> CommandAction {
        .transferCreate(TransferRequest(app: Apps.news, identifier: ident(id), direction: .download, url: "http://127.0.0.1:8080/x",
                                        destination: "x.bin", earliestBeginDate: earliest, countOfBytesClientExpectsToReceive: bytes,
                                        timeoutIntervalForRequest: request, timeoutIntervalForResource: resource))
    }

    private func expectRefused(_ state: inout SchedulerState, _ action: CommandAction, _ message: String? = nil,
                               issuedAt: Date = t0, issuerPID: Int32? = 1, sourceLocation: SourceLocation = #_sourceLocation) {
        _ = state.takeChanges()
        let before = state
        let result = state.apply(Command(issuedAt: issuedAt, issuerPID: issuerPID, action: action), now: t0)
        #expect(result.errorName == "invalidCommand", "\(action)", sourceLocation: sourceLocation)
        if let message { #expect(result.errorMessage == message, sourceLocation: sourceLocation) }
        #expect(state.transfers == before.transfers && state.requests == before.requests && state.tasks == before.tasks,
                sourceLocation: sourceLocation)
        #expect(state.takeChanges().eventTypes == [.refused], sourceLocation: sourceLocation)
    }

    @Test("timeouts outside 1 s … 30 days (request) and 1 s … 365 days (resource) are refused with the range")
    func timeouts() {
        var state = makeState()
        for value in Self.hostileSeconds {
            expectRefused(&state, download("rq", request: value))
            expectRefused(&state, download("rs", resource: value))
        }
        expectRefused(&state, download("rs", resource: 1e300),
                      "bad timeoutIntervalForResource '1e+300': expected a number of seconds from 1 to 31536000")
        expectRefused(&state, download("rq", request: .nan),
                      "bad timeoutIntervalForRequest 'nan': expected a number of seconds from 1 to 2592000")
        #expect(state.run(download("ok", request: 2_592_000, resource: 31_536_000), at: t0).errorName == nil)
        #expect(state.run(download("ok1", request: 1, resource: 1), at: t0).errorName == nil)
    }

    @Test("byte counts outside 0 … 2^50 are refused")
    func bytes() {
        var state = makeState()
        for value: Int64 in [-1, .min, .max, (1 << 50) + 1] {
            expectRefused(&state, download("b", bytes: value))
        }
        expectRefused(&state, .transferCreate(TransferRequest(app: Apps.news, identifier: ident("u"), direction: .upload,
                                                              url: "http://127.0.0.1:8080/u", sourceFile: "/tmp/u",
                                                              countOfBytesClientExpectsToSend: -5)),
                      "bad countOfBytesClientExpectsToSend '-5': expected a whole number of bytes from 0 to 1125899906842624")
        #expect(state.run(download("zero", bytes: 0), at: t0).errorName == nil)
        #expect(state.run(download("max", bytes: 1 << 50), at: t0).errorName == nil)
    }

    @Test("dates more than ten years from now are refused: earliestBeginDate, issuedAt")
    func dates() {
        var state = makeState()
        let far: [Date] = [t0.addingTimeInterval(NumericBounds.dateReach + 1), t0.addingTimeInterval(-NumericBounds.dateReach - 1),
                           Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e300), Date(timeIntervalSince1970: .nan),
                           .distantFuture, .distantPast]
        for date in far {
            expectRefused(&state, .submit(SubmitRequest(app: Apps.news, identifier: Tasks.refresh, kind: .appRefresh, earliestBeginDate: date)))
            expectRefused(&state, download("e", earliest: date))
            expectRefused(&state, .cancelAll(app: Apps.news), issuedAt: date)
        }
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: t0.addingTimeInterval(NumericBounds.dateReach), at: t0)
            .errorName == nil)
        #expect(state.submitRequest(Tasks.refresh, kind: .appRefresh, earliest: t0.addingTimeInterval(-NumericBounds.dateReach), at: t0)
            .errorName == nil, "a date in the past means due now")
    }

    @Test("pids outside 1 … 4194304 are refused: beginFinishing, attach, detach, issuerPID")
    func pids() {
        var state = makeState()
        for pid: Int32 in [0, -1, .min, .max, 4_194_305] {
            expectRefused(&state, .beginFinishing(app: Apps.news, name: nil, pid: pid))
            expectRefused(&state, .attach(app: Apps.news, pid: pid, identifiers: []))
            expectRefused(&state, .detach(app: Apps.news, pid: pid))
            expectRefused(&state, .cancelAll(app: Apps.news), issuerPID: pid)
        }
        expectRefused(&state, .beginFinishing(app: Apps.news, name: nil, pid: 0),
                      "bad pid '0': expected a whole number from 1 to 4194304")
        #expect(state.run(.beginFinishing(app: Apps.news, name: nil, pid: 4_194_304), at: t0).errorName == nil)
    }

    @Test("settings with out-of-range numbers are refused: a budget of 1e300 s would overflow every deadline")
    func settings() throws {
        let directory = NSTemporaryDirectory() + "bounds-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cases: [(String, String)] = [
            ("appRefreshBudgetSeconds", "1e300"), ("processingBudgetSeconds", "1e12"), ("expirationGraceSeconds", "1e300"),
            ("outcomeRetentionSeconds", "1e300"), ("throttleMaximumSeconds", "1e300"), ("transferRetryMaximumSeconds", "1e300"),
            ("transferRetryInitialSeconds", "0"), ("finishedTransferRetentionSeconds", "-1"), ("idleLoadAverage", "1e300"),
            ("maximumPendingProcessing", "9223372036854775807"), ("eventLogMaximumBytes", "9223372036854775807"),
            ("eventLogKeptFiles", "100000"), ("maximumConcurrentTransfers", "0"), ("conditionsRecheckSeconds", "1e300"),
        ]
        for (key, value) in cases {
            try Data("{\"\(key)\": \(value)}".utf8).write(to: URL(fileURLWithPath: SchedulerSettings.path(inConfig: directory)))
            #expect(throws: SettingsError.self, "\(key) = \(value)") { try SchedulerSettings.load(configDirectory: directory) }
            do {
                _ = try SchedulerSettings.load(configDirectory: directory)
            } catch {
                #expect(error.reason.hasPrefix(key), "\(error)")
            }
        }
    }
}
