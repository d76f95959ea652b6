import Foundation
import Testing
@testable import SchedulerCore
import TaskState

/// When a transfer that failed transiently tries again: the backoff, the server's `Retry-After`,
/// the backoff starting over after progress, and restarts from byte 0.
@Suite("TransferPolicy: retries")
struct TransferRetryPolicyTests {
    @Test("a transient failure waits 1 s, then 2 s, 4 s ..., capped at transferRetryMaximumSeconds; retries are counted")
    func transientFailureBacksOff() throws {
        var settings = SchedulerSettings()
        settings.transferRetryMaximumSeconds = 5
        var state = makeState(settings: settings)
        let key = transferKey("flaky")
        state.createTransfer(download("flaky"), at: t0)
        var now = t0
        #expect(state.startDue(at: now) == [key])
        for (attempt, delay) in [1.0, 2, 4, 5, 5].enumerated() {
            now = now.addingTimeInterval(3)
            _ = state.takeChanges()
            state.transferEnded(key, .failed(message: "connection lost", transient: true),
                                bytesTransferred: 100, bytesExpected: 1000, now: now)
            let record = try #require(state.transfer("flaky"))
            #expect(record.state == .waiting)
            #expect(record.retries == attempt + 1)
            #expect(record.retryAt == now.addingTimeInterval(delay))
            #expect(record.lastError == "connection lost")
            #expect(record.finishedAt == nil)
            #expect(record.bytesTransferred == 100)
            let changes = state.takeChanges()
            #expect(changes.transfers == [key])
            #expect(changes.eventTypes == [.transferRetrying])
            #expect(changes.events.first?.reason == "retry \(attempt + 1)")
            #expect(changes.events.first?.message
                    == "com.example.news: transfer flaky failed (connection lost); retry \(attempt + 1) in \(Int(delay)) s")

            #expect(state.blockers(of: "flaky", at: now.addingTimeInterval(delay - 0.001)) == [.retryBackoff])
            #expect(state.nextWake(after: now) == now.addingTimeInterval(delay))
            #expect(state.dueTransfers(at: now.addingTimeInterval(delay - 0.001)).isEmpty)
            now = now.addingTimeInterval(delay)
            #expect(state.startDue(at: now) == [key])
            #expect(state.transfer("flaky")?.retryAt == nil, "starting clears retryAt")
            state.transferRequested(key, rangeStart: 100, now: now)
            #expect(state.takeChanges().events.first?.message
                    == "com.example.news: transfer flaky started from byte 100 (attempt \(attempt + 2))")
        }
    }

    @Test("an attempt that moved bytes starts the backoff over; failures in a row without progress double it")
    func progressRestartsTheBackoff() throws {
        var state = makeState()
        let key = transferKey("flaky")
        state.createTransfer(download("flaky"), at: t0)
        var now = t0
        #expect(state.startDue(at: now) == [key])
        // made progress, none, none, progress, none
        for (madeProgress, delay) in [(true, 1.0), (false, 2), (false, 4), (true, 1), (false, 2)] {
            now = now.addingTimeInterval(10)
            state.transferEnded(key, .failed(message: "connection lost", transient: true, madeProgress: madeProgress),
                                bytesTransferred: 100, bytesExpected: 1000, now: now)
            let record = try #require(state.transfer("flaky"))
            #expect(record.retryAt == now.addingTimeInterval(delay), "progress \(madeProgress)")
            now = now.addingTimeInterval(delay)
            #expect(state.startDue(at: now) == [key])
        }
        #expect(state.transfer("flaky")?.retries == 5, "every retry is still counted")
        #expect(state.transfer("flaky")?.failuresWithoutProgress == 2)
    }

    @Test("a record from before failuresWithoutProgress backs off by its retries")
    func olderRecordsBackOffByRetries() throws {
        var state = makeState()
        let key = transferKey("old")
        state.createTransfer(download("old"), at: t0)
        #expect(state.startDue(at: t0) == [key])
        var record = try #require(state.transfer("old"))
        record.retries = 3
        record.failuresWithoutProgress = nil
        state.setTransfer(record)
        state.transferEnded(key, .failed(message: "connection lost", transient: true), bytesTransferred: 0, bytesExpected: nil, now: t0)
        #expect(state.transfer("old")?.retryAt == t0.addingTimeInterval(8), "the fourth failure in a row waits 8 s")
    }

    @Test("Retry-After replaces the backoff, is said in the event, and is bounded (negative, NaN, over a day)")
    func retryAfterReplacesTheBackoff() throws {
        for (retryAfter, delay, said) in [(7.5, 7.5, true), (-3, 0, true), (1e9, 86_400, true), (.nan, 1, false), (.infinity, 1, false)] {
            var state = makeState()
            let key = transferKey("busy")
            state.createTransfer(download("busy"), at: t0)
            #expect(state.startDue(at: t0) == [key])
            _ = state.takeChanges()
            state.transferEnded(key, .failed(message: "the server answered HTTP 503", transient: true, retryAfter: retryAfter),
                                bytesTransferred: 0, bytesExpected: nil, now: t0)
            #expect(state.transfer("busy")?.retryAt == t0.addingTimeInterval(delay), "Retry-After \(retryAfter)")
            let message = try #require(state.takeChanges().events.first?.message)
            #expect(message.hasSuffix("(the server's Retry-After)") == said, "\(message)")
        }
    }

    @Test("a restart sets the count back to 0 and says why in a transferRestarted event")
    func restartIsRecorded() throws {
        var state = makeState()
        let key = transferKey("moved")
        state.createTransfer(download("moved"), at: t0)
        #expect(state.startDue(at: t0) == [key])
        state.transferProgressed(key, bytesTransferred: 500, bytesExpected: 1000, bytesPerSecond: nil, etag: "\"a\"",
                                 lastModified: nil, now: t0)
        _ = state.takeChanges()
        state.transferRestarted(key, reason: "the 206's ETag \"b\" is not \"a\"", now: t0)
        #expect(state.transfer("moved")?.bytesTransferred == 0)
        let changes = state.takeChanges()
        #expect(changes.eventTypes == [.transferRestarted])
        #expect(changes.events.first?.reason == "the 206's ETag \"b\" is not \"a\"")
        #expect(changes.events.first?.message
                == "com.example.news: transfer moved dropped 500 bytes and starts again from byte 0: the 206's ETag \"b\" is not \"a\"")
        state.transferEnded(key, .paused, bytesTransferred: 0, bytesExpected: nil, now: t0)
        _ = state.takeChanges()
        state.transferRestarted(key, reason: "late", now: t0)
        #expect(state.takeChanges().events.isEmpty, "only a running transfer restarts")
    }

    @Test("the default backoff doubles from 1 s and stops growing at 300 s")
    func defaultBackoff() {
        let settings = SchedulerSettings()
        #expect((1...11).map { settings.transferRetryDelay(retries: $0) } == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300])
        #expect(settings.transferRetryDelay(retries: 10_000) == 300)
    }
}
