import FoundationEssentials

/// Short human durations for tables: `12s`, `4m 05s`, `1h 58m`, `3d 4h`.
public enum DurationText {
    /// A duration in seconds; negative values are shown as their magnitude.
    public static func compact(_ seconds: TimeInterval) -> String {
        // Clamped to a century: a far-off or NaN date shows as long, never traps.
        let total = SafeNumber.int(min(abs(seconds), 3_153_600_000), .down)
        let days = total / 86_400, hours = (total % 86_400) / 3600, minutes = (total % 3600) / 60, secs = total % 60
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(String(printf: "%02ld", minutes))m" }
        if minutes > 0 { return "\(minutes)m \(String(printf: "%02ld", secs))s" }
        return "\(secs)s"
    }

    /// `in 1h 58m` for a future date, `due` for now or the past.
    public static func until(_ date: Date?, from now: Date) -> String {
        guard let date else { return "due" }
        let seconds = date.timeIntervalSince(now)
        return seconds >= 1 ? "in \(compact(seconds))" : "due"
    }

    /// `3m 12s ago`.
    public static func since(_ date: Date, from now: Date) -> String {
        "\(compact(now.timeIntervalSince(date))) ago"
    }
}
