import FoundationEssentials
import Glibc
import TaskState

/// When the dashboard's timer next wakes it: the pure part of its tick, so it can be tested.
public enum DashboardWake {
    /// The next wake after `now` (seconds since 1970): the next whole second while a countdown is
    /// on screen, else the next minute (the header clock); sooner when the timeline follows now
    /// with cells of `followedCell` seconds, at the next cell boundary.
    public static func next(after now: Double, countdown: Bool, followedCell: Double?) -> Double {
        var next = countdown ? floor(now) + 1 : floor(now / 60) * 60 + 60
        if let followedCell {
            let cell = max(1, followedCell)
            next = min(next, (floor(now / cell) + 1) * cell)
        }
        return next
    }

    /// `time` as the seconds and nanoseconds of an absolute timer, rounded up: a timer that fired
    /// before `time` (its fraction dropped) would find the same wake again, already past, and the
    /// loop would redraw back to back until the clock reached it.
    public static func timerValue(_ time: Double) -> (seconds: Int64, nanoseconds: Int64) {
        let whole = floor(time)
        var seconds = SafeNumber.int64(whole)
        var nanoseconds = SafeNumber.int64(((time - whole) * 1e9).rounded(.up))
        if nanoseconds >= 1_000_000_000 {
            seconds = seconds == .max ? .max : seconds + 1
            nanoseconds = 0
        }
        return (seconds, nanoseconds)
    }
}
