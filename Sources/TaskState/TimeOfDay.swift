import FoundationEssentials

/// A time as a person reads it on a clock in a time zone: `08:10`, with the weekday when it is
/// not within the next day (`Tue 08:10`).
public enum TimeOfDay {
    public static func text(_ date: Date, zone: WallClockZone, now: Date? = nil) -> String {
        let time = zone.time(of: date)
        let clock = String(printf: "%02ld:%02ld", time.hour, time.minute)
        guard let now, abs(date.timeIntervalSince(now)) >= 86_400 else { return clock }
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        return "\(days[(time.weekday - 1) % 7]) \(clock)"
    }
}
