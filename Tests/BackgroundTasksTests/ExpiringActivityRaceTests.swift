@testable import BackgroundTasks
import Dispatch
import Synchronization
import Testing

/// Review of issue 17, item 2: an activity whose budget ends as its first call returns. The
/// expired call used to be decided before it was dispatched, so it could begin after the first
/// call had returned and the finishing task had ended.
@Suite struct ExpiringActivityRaceTests {
    /// What the calls of every activity saw.
    private struct Tally {
        var expiredCalls = 0
        /// Expired calls begun after the activity ended.
        var lateExpiries = 0
        /// Activities that ended while their expired call still ran.
        var endedDuringExpiry = 0
        /// Activities whose block heard the expiry twice.
        var twice = 0
    }

    @Test func theExpiredCallNeverBeginsAfterTheActivityEndedAndHappensAtMostOnce() {
        let queue = DispatchQueue(label: "expiring-activity-race", attributes: .concurrent)
        let tally = Mutex(Tally())
        let activities = 20_000
        for index in 0..<activities {
            // Per activity: ended (run() returned), expired call running, expired calls so far.
            let ended = Mutex(false), running = Mutex(false), calls = Mutex(0)
            let began = DispatchSemaphore(value: 0)
            // Every hundredth activity's first call waits for its expiry to begin: the expired
            // call surely happens, and the end has to wait for it.
            let waitsForExpiry = index % 100 == 0
            let activity = ExpiringActivity({ expired in
                guard expired else {
                    if waitsForExpiry { began.wait() }
                    // A first call of 0 to 1240 short steps, so the expiry lands before, during and
                    // just after its return.
                    for _ in 0..<(index % 32) * 40 { _ = ended.withLock { $0 } }
                    return
                }
                running.withLock { $0 = true }
                let late = ended.withLock { $0 }
                let count = calls.withLock { $0 += 1; return $0 }
                tally.withLock {
                    $0.expiredCalls += 1
                    if late { $0.lateExpiries += 1 }
                    if count > 1 { $0.twice += 1 }
                }
                if waitsForExpiry { began.signal() }
                // Long enough for the end to overtake it when it does not wait.
                for _ in 0..<200 { _ = ended.withLock { $0 } }
                running.withLock { $0 = false }
            }, queue: queue)
            // The budget ends as the first call returns: the expiry arrives (twice, as a
            // repeated delivery would) on another thread while `run` calls and ends.
            DispatchQueue.concurrentPerform(iterations: 2) { side in
                if side == 0 {
                    activity.run()
                    if running.withLock({ $0 }) { tally.withLock { $0.endedDuringExpiry += 1 } }
                    ended.withLock { $0 = true }
                } else {
                    activity.expire()
                    activity.expire()
                }
            }
        }
        queue.sync(flags: .barrier) {}
        let result = tally.withLock { $0 }
        #expect(result.expiredCalls >= activities / 100, "the expiry was delivered: \(result)")
        #expect(result.lateExpiries == 0, "\(result)")
        #expect(result.endedDuringExpiry == 0, "\(result)")
        #expect(result.twice == 0, "\(result)")
    }
}
