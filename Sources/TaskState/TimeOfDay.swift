import FoundationEssentials

/// A time as a person reads it on a clock in a time zone: `08:10`, with the weekday when it is
/// not within the next day (`Tue 08:10`).
public enum TimeOfDay {
    public static func text(_ date: Date, timeZone: TimeZone, now: Date? = nil) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
        let clock = String(printf: "%02ld:%02ld", parts.hour ?? 0, parts.minute ?? 0)
        guard let now, abs(date.timeIntervalSince(now)) >= 86_400 else { return clock }
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        return "\(days[((parts.weekday ?? 1) - 1) % 7]) \(clock)"
    }
}
