import FoundationEssentials

/// Conversions from `Double` that never trap.
///
/// `Int(x)` traps when `x` is NaN, infinite or out of range. Numbers from outside (commands,
/// state files, settings) are range-checked where they enter, but formatting and timers must not
/// take the scheduler down even for a value that slipped past a check, so they convert through here.
public enum SafeNumber {
    /// `value` rounded by `rule` and clamped to `Int64`; NaN gives 0.
    public static func int64(_ value: Double, _ rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int64 {
        guard !value.isNaN else { return 0 }
        let rounded = value.rounded(rule)
        // 2^63 is exactly representable; anything at or above it does not fit.
        if rounded >= 9_223_372_036_854_775_808.0 { return .max }
        if rounded < -9_223_372_036_854_775_808.0 { return .min }
        return Int64(rounded)
    }

    /// As ``int64(_:_:)``, for `Int`.
    public static func int(_ value: Double, _ rule: FloatingPointRoundingRule = .toNearestOrAwayFromZero) -> Int {
        Int(truncatingIfNeeded: int64(value, rule))
    }

    /// `a + b`, stopping at the ends of `Int`: counts come from records a person can edit, and
    /// one written as `Int.max` must not trap the scheduler or the dashboard.
    public static func sum(_ a: Int, _ b: Int) -> Int {
        let (result, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : result
    }

    /// Seconds for a message: `60` for a whole number, else `1.5`; `1e+300` and `nan` as such.
    public static func secondsText(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    /// The earliest and latest dates the state format writes: 1900-01-01 to the end of 9999
    /// (before 1900 the formatter's calendar is not the proleptic Gregorian one).
    public static let writableDates: ClosedRange<Double> = -2_208_988_800...253_402_300_799.999

    /// `date` in the state format when it is writable, else its raw seconds since 1970, for messages.
    public static func isoText(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, writableDates.contains(seconds) else { return "\(seconds) s since 1970" }
        return JSONFormat.string(from: date)
    }
}
