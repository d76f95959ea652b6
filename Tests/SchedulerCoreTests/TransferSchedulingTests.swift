import Foundation
import SchedulerCore
import TaskState
import Testing

@Suite("TransferScheduling")
struct TransferSchedulingTests {
    func transfer(_ name: String, created: TimeInterval = 0, state: TransferRecord.State = .waiting,
                  direction: TransferRecord.Direction = .download, expected: Int64? = nil, hint: Int64? = nil,
                  begin: TimeInterval? = nil, retryAt: TimeInterval? = nil, discretionary: Bool = false,
                  resourceTimeout: Double? = nil) -> TransferRecord {
        TransferRecord(app: Apps.news, identifier: ident(name), direction: direction, url: "http://127.0.0.1/\(name)",
                       state: state, bytesExpected: expected, earliestBeginDate: begin.map(at),
                       isDiscretionary: discretionary, createdAt: at(created), updatedAt: at(created),
                       countOfBytesClientExpectsToReceive: direction == .download ? hint : nil,
                       countOfBytesClientExpectsToSend: direction == .upload ? hint : nil,
                       timeoutIntervalForResource: resourceTimeout, retryAt: retryAt.map(at))
    }

    func key(_ name: String) -> TaskKey { TaskKey(app: Apps.news, identifier: ident(name)) }

    @Test("earliestBeginDate is a floor: not a millisecond earlier, and the plan wakes exactly then")
    func earliestBeginDateHonoured() {
        let records = [transfer("later", begin: 60)]
        let before = TransferScheduling.plan(records, conditions: Conditions(), now: at(59.999), concurrencyLimit: 4)
        #expect(before.start.isEmpty)
        #expect(before.blocked[key("later")] == [.earliestBeginDate])
        #expect(before.nextWake == at(60))
        let then = TransferScheduling.plan(records, conditions: Conditions(), now: at(60), concurrencyLimit: 4)
        #expect(then.start == [key("later")])
    }

    @Test("smaller expected sizes start first (app hints before Content-Length), then older ones; unknown sizes last")
    func ordering() {
        let records = [
            transfer("unknown", created: 0),
            transfer("big", created: 1, expected: 5_000_000),
            transfer("hinted", created: 2, expected: 9_000_000, hint: 1_000),
            transfer("small-new", created: 4, expected: 2_000),
            transfer("small-old", created: 3, expected: 2_000),
            transfer("upload", created: 5, direction: .upload, hint: 1_500),
        ]
        let plan = TransferScheduling.plan(records, conditions: Conditions(), now: at(10), concurrencyLimit: 10)
        #expect(plan.start == ["hinted", "upload", "small-old", "small-new", "big", "unknown"].map(key))
    }

    @Test("the concurrency limit counts running transfers; the rest wait with that reason")
    func concurrencyLimit() {
        let records = [
            transfer("running", state: .running),
            transfer("a", created: 1), transfer("b", created: 2), transfer("c", created: 3),
            transfer("paused", state: .paused), transfer("done", state: .completed),
        ]
        let plan = TransferScheduling.plan(records, conditions: Conditions(), now: at(10), concurrencyLimit: 2)
        #expect(plan.start == [key("a")])
        #expect(plan.blocked == [key("b"): [.concurrencyLimit], key("c"): [.concurrencyLimit]])
        let full = TransferScheduling.plan(records, conditions: Conditions(), now: at(10), concurrencyLimit: 1)
        #expect(full.start.isEmpty)
        #expect(full.blocked.count == 3)
    }

    @Test("discretionary transfers wait for external power and a network; others do not")
    func discretionaryWaits() {
        let records = [transfer("bg", discretionary: true), transfer("fg", created: 1)]
        let onBattery = TransferScheduling.plan(records, conditions: Conditions(externalPower: false, network: false),
                                                now: at(10), concurrencyLimit: 4)
        #expect(onBattery.start == [key("fg")])
        #expect(onBattery.blocked[key("bg")] == [.externalPower, .network])
        #expect(onBattery.nextWake == at(0).addingTimeInterval(TransferRecord.defaultTimeoutIntervalForResource))
        let plugged = TransferScheduling.plan(records, conditions: Conditions(externalPower: true, network: true),
                                              now: at(10), concurrencyLimit: 4)
        #expect(plugged.start == [key("bg"), key("fg")])
    }

    @Test("retry backoff doubles from 1 s and stops growing at 5 minutes")
    func backoff() {
        let delays = (0...12).map { TransferScheduling.retryDelay(afterFailures: $0) }
        #expect(delays == [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300])
        #expect(TransferScheduling.retryDelay(afterFailures: 10_000) == 300)
    }

    @Test("a transient failure waits out its backoff, then starts again")
    func transientFailureRetries() {
        var record = transfer("flaky", state: .running)
        record = TransferScheduling.afterTransientFailure(record, reason: "connection lost", now: at(100))
        #expect(record.state == .waiting)
        #expect(record.retries == 1)
        #expect(record.retryAt == at(101))
        #expect(record.lastError == "connection lost")
        let waiting = TransferScheduling.plan([record], conditions: Conditions(), now: at(100.5), concurrencyLimit: 4)
        #expect(waiting.blocked[key("flaky")] == [.retryBackoff])
        #expect(waiting.nextWake == at(101))
        #expect(TransferScheduling.plan([record], conditions: Conditions(), now: at(101), concurrencyLimit: 4).start == [key("flaky")])
        record = TransferScheduling.afterTransientFailure(record, reason: "HTTP 503", now: at(102))
        #expect(record.retryAt == at(104))
    }

    @Test("the resource timeout fails a transfer for good, whether waiting, paused or about to retry")
    func resourceTimeout() {
        let records = [
            transfer("old", resourceTimeout: 60),
            transfer("paused", state: .paused, resourceTimeout: 60),
            transfer("fresh", created: 30, resourceTimeout: 60),
        ]
        let plan = TransferScheduling.plan(records, conditions: Conditions(), now: at(60), concurrencyLimit: 4)
        #expect(plan.expired == [key("old"), key("paused")])
        #expect(plan.start == [key("fresh")])
        #expect(plan.nextWake == at(90))
        let late = TransferScheduling.afterTransientFailure(transfer("edge", state: .running, resourceTimeout: 60),
                                                           reason: "HTTP 500", now: at(59.5))
        #expect(late.state == .failed)
        #expect(late.finishedAt == at(59.5))
        #expect(late.retryAt == nil)
        #expect(late.lastError?.hasPrefix("HTTP 500") == true)
    }

    @Test("with nothing waiting on time, there is no wake-up")
    func noWake() {
        let plan = TransferScheduling.plan([transfer("done", state: .completed)], conditions: Conditions(),
                                           now: at(10), concurrencyLimit: 4)
        #expect(plan == TransferPlan(start: [], blocked: [:], expired: [], nextWake: nil))
    }
}
