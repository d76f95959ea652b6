import ArgumentParser
import FoundationEssentials
import TaskState

/// Numeric options, parsed by `bgctl` itself rather than by ArgumentParser, so that every bad
/// value (`nan`, `inf`, `1e300`, `-0`, `12abc`, out of range) is one line naming the option and
/// its documented range (``NumericBounds``), and exit 2, before anything is written.
enum NumberArgument {
    /// Seconds: plain decimal digits with an optional fraction (`90`, `2.5`), within `range`.
    static func seconds(_ text: String, option: String, in range: ClosedRange<Double>) throws -> Double {
        guard isDecimal(text), let value = Double(text), value.isFinite, range.contains(value) else {
            throw ValidationError(OutOfBounds(
                field: option, value: text,
                expected: "a number of seconds from \(SafeNumber.secondsText(range.lowerBound)) to \(SafeNumber.secondsText(range.upperBound))"
            ).description)
        }
        return value
    }

    /// A whole number: digits only (no sign: no range goes below 0), within `range`.
    static func whole(_ text: String, option: String, in range: ClosedRange<Int64>, unit: String = "") throws -> Int64 {
        guard !text.isEmpty, text.allSatisfy(\.isASCIIDigit), let value = Int64(text), range.contains(value) else {
            throw ValidationError(OutOfBounds(field: option, value: text,
                                              expected: "a whole number\(unit) from \(range.lowerBound) to \(range.upperBound)").description)
        }
        return value
    }

    /// `--earliest`: `+SECONDS` from `now` (0 to ten years), or an ISO 8601 date within ten years of `now`.
    static func earliest(_ text: String, now: Date) throws -> Date {
        if text.hasPrefix("+") {
            let reach = NumericBounds.dateReach
            let seconds = try seconds(String(text.dropFirst()), option: "--earliest +SECONDS", in: 0...reach)
            return now.addingTimeInterval(seconds)
        }
        guard let date = JSONFormat.date(from: text) else {
            throw ValidationError("bad --earliest '\(text)': expected an ISO 8601 date like 2026-11-22T12:00:00Z, or +SECONDS")
        }
        do {
            try NumericBounds.check(date: date, "--earliest", now: now)
        } catch {
            throw ValidationError(error.description)
        }
        return date
    }

    /// Digits, optionally a `.` and more digits; no sign, exponent, `nan` or `inf`.
    private static func isDecimal(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit) else { return false }
        return parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy(\.isASCIIDigit))
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
