import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// `transferStarted` names the byte its attempt's `Range` request asked for, and `transferPaused`
/// the bytes the stopped attempt left, whatever the record's count said before.
@Suite("TransferPolicy: events say what happened")
struct TransferEventTruthTests {
    @Test("a retry whose request asks for everything says from byte 0, though the record held bytes")
    func retryWithoutRangeSaysByteZero() throws {
        var state = makeState(settings: SchedulerSettings())
        let key = transferKey("plain")
        state.createTransfer(download("plain"), at: t0)
        #expect(state.startDue(at: t0) == [key])
        state.transferEnded(key, .failed(message: "connection lost", transient: true, madeProgress: true),
                            bytesTransferred: 1000, bytesExpected: 4000, now: t0.addingTimeInterval(1))
        let retryAt = try #require(state.transfer("plain")?.retryAt)
        #expect(state.startDue(at: retryAt) == [key])
        #expect(state.transfer("plain")?.bytesTransferred == 1000)
        _ = state.takeChanges()
        state.transferRestarted(key, reason: "no ETag to resume with", now: retryAt)
        state.transferRequested(key, rangeStart: nil, now: retryAt)
        #expect(state.takeChanges().events.map(\.message) == [
            "com.example.news: transfer plain dropped 1000 bytes and starts again from byte 0: no ETag to resume with",
            "com.example.news: transfer plain started from byte 0 (attempt 2)",
        ])
    }

    @Test("an upload's start names no byte; a finished or unknown transfer's request says nothing")
    func uploadAndStaleRequests() {
        var state = makeState(settings: SchedulerSettings())
        state.createTransfer(upload("photo"), at: t0)
        #expect(state.startDue(at: t0) == [transferKey("photo")])
        _ = state.takeChanges()
        state.transferRequested(transferKey("photo"), rangeStart: nil, now: t0)
        #expect(state.takeChanges().events.map(\.message) == ["com.example.news: transfer photo started (attempt 1)"])
        state.transferEnded(transferKey("photo"), .completed(statusCode: 201), bytesTransferred: 10, bytesExpected: 10, now: t0)
        _ = state.takeChanges()
        state.transferRequested(transferKey("photo"), rangeStart: nil, now: t0)
        state.transferRequested(transferKey("ghost"), rangeStart: 5, now: t0)
        #expect(state.takeChanges().events.isEmpty)
    }

    @Test("a pause whose attempt completed, or was cancelled, is not said; one that failed is, at its bytes")
    func pauseOutcomes() {
        var state = makeState(settings: SchedulerSettings())
        for name in ["done", "gone", "broke"] {
            state.createTransfer(download(name), at: t0)
        }
        #expect(Set(state.startDue(at: t0)) == Set(["done", "gone", "broke"].map { transferKey($0) }))
        for name in ["done", "gone", "broke"] {
            _ = state.run(.transferPause(app: Apps.news, identifier: ident(name)), at: t0)
        }
        _ = state.run(.transferCancel(app: Apps.news, identifier: ident("gone")), at: t0)
        _ = state.takeChanges()
        state.transferEnded(transferKey("done"), .completed(statusCode: 200), bytesTransferred: 50, bytesExpected: 50, now: t0)
        state.transferEnded(transferKey("gone"), .cancelled, bytesTransferred: 0, bytesExpected: nil, now: t0)
        state.transferEnded(transferKey("broke"), .failed(message: "reset", transient: true), bytesTransferred: 77,
                            bytesExpected: nil, now: t0)
        let events = state.takeChanges().events
        #expect(events.map(\.type) == [.transferCompleted, .transferPaused])
        #expect(events.last?.message == "com.example.news: transfer broke paused at 77 bytes")
    }
}
