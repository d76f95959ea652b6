import Dashboard
import Foundation
import Testing

/// Review of issue 15, item 1: the timeline following now must not make bgtop spin.
@Suite struct DashboardWakeTests {
    /// The timer armed for a wake never fires before it, so the wake after a firing is a later one.
    @Test(arguments: [(1_795_341_600.3, 1.5), (1_795_341_600.999, 2.25), (1_795_341_601.0, 7.5), (1_795_341_659.2, 0.4)])
    func aTimerArmedForAFractionalWakeFiresNoEarlierAndTheNextWakeIsLater(_ now: Double, _ cell: Double) {
        let next = DashboardWake.next(after: now, countdown: false, followedCell: cell)
        #expect(next > now)
        let value = DashboardWake.timerValue(next)
        #expect(value.nanoseconds >= 0 && value.nanoseconds < 1_000_000_000)
        let fires = Double(value.seconds) + Double(value.nanoseconds) / 1e9
        #expect(fires >= next, "armed at \(value) for \(next)")
        #expect(DashboardWake.next(after: fires, countdown: false, followedCell: cell) > next, "a firing moves the wake on")
    }

    @Test func aCountdownTicksEverySecondAndOtherwiseTheMinute() {
        #expect(DashboardWake.next(after: 1_795_341_600.4, countdown: true, followedCell: nil) == 1_795_341_601)
        #expect(DashboardWake.next(after: 1_795_341_600.4, countdown: false, followedCell: nil) == 1_795_341_660)
        #expect(DashboardWake.next(after: 1_795_341_600.4, countdown: true, followedCell: 0.2) == 1_795_341_601,
                "a cell under a second ticks at most once a second")
        let whole = DashboardWake.timerValue(1_795_341_601)
        #expect(whole.seconds == 1_795_341_601 && whole.nanoseconds == 0)
    }
}
