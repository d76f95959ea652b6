import Foundation
@testable import SchedulerRuntime
import Testing

/// The inbox's retry timer: a second after the first failure, twice as long after each failure
/// that follows, never longer than a minute, and no timer once a listing works.
@Suite struct InboxListingRetryTests {
    @Test func theWaitDoublesUpToAMinuteAndEndsWhenTheListingWorks() {
        var retry = InboxListingRetry()
        let t0 = Date(timeIntervalSince1970: 1_795_341_600)
        #expect(retry.nextTry == nil)
        let first = retry.failed(at: t0)
        #expect(first, "the first failure of a run")
        #expect(retry.nextTry == t0.addingTimeInterval(1))
        var waits: [TimeInterval] = []
        for step in 1...8 {
            let now = t0.addingTimeInterval(Double(step) * 100)
            let isFirst = retry.failed(at: now)
            #expect(!isFirst)
            waits.append(retry.nextTry!.timeIntervalSince(now))
        }
        #expect(waits == [2, 4, 8, 16, 32, 60, 60, 60])
        // Failures before the try is due (turns something else woke) leave the timer alone.
        let due = retry.nextTry!
        for early in [due.addingTimeInterval(-59), due.addingTimeInterval(-1)] {
            let isFirst = retry.failed(at: early)
            #expect(!isFirst && retry.nextTry == due)
        }
        let recovered = retry.succeeded()
        #expect(recovered, "it had been failing")
        #expect(retry.nextTry == nil)
        let again = retry.succeeded()
        #expect(!again)
        let restarted = retry.failed(at: t0)
        #expect(restarted, "a new run of failures starts at a second again")
        #expect(retry.nextTry == t0.addingTimeInterval(1))
    }
}
