import FoundationEssentials

/// Dates as the state format writes them, `2026-11-22T10:00:00.250Z`, worked out with integer
/// arithmetic on the proleptic Gregorian calendar (``WallClockTime/civil(fromDays:)``).
///
/// Every file, outcome, event and journal record carries dates, and `Date.ISO8601FormatStyle`
/// took about 8 000 instructions to write each, 7% of the scheduler's work per socket command,
/// and more to read one; this takes a few dozen. `JSONFormatTests` holds both directions to the
/// format style over the whole writable range.
enum UTCText {
    /// `seconds` since 1970 (UTC) and the `milliseconds` after them (0 to 999), for years 1 to 9999.
    static func format(seconds: Int64, milliseconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = Int(seconds - days * 86_400)
        let (year, month, day) = WallClockTime.civil(fromDays: days)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func digits(_ value: Int, _ count: Int) {
            var divisor = 1
            for _ in 1..<count { divisor *= 10 }
            var value = value
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
                value %= divisor
                divisor /= 10
            }
        }
        digits(year, 4); bytes.append(UInt8(ascii: "-"))
        digits(month, 2); bytes.append(UInt8(ascii: "-"))
        digits(day, 2); bytes.append(UInt8(ascii: "T"))
        digits(second / 3600, 2); bytes.append(UInt8(ascii: ":"))
        digits(second / 60 % 60, 2); bytes.append(UInt8(ascii: ":"))
        digits(second % 60, 2); bytes.append(UInt8(ascii: "."))
        digits(milliseconds, 3); bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Reads what ``format(seconds:milliseconds:)`` writes, `YYYY-MM-DDTHH:MM:SS.mmmZ`, or the same
    /// without the fraction: a real date and time of years 1900 to 9999. Nil for any other text
    /// (an offset, another number of fraction digits, February 30th), which the format style reads
    /// or refuses instead; and for the dates where the style's arithmetic gives another last bit
    /// (before 1900, where it also turns Julian before 1582, and within 2^23 seconds, about 97
    /// days, of 2001, where it adds the fraction at a finer scale), so the style reads those too.
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { bytes -> Date? in
            guard bytes.count == 24 || bytes.count == 20 else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for index in start..<(start + count) {
                    let digit = bytes[index] &- UInt8(ascii: "0")
                    guard digit < 10 else { return nil }
                    value = value * 10 + Int(digit)
                }
                return value
            }
            guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
                  bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[bytes.count - 1] == UInt8(ascii: "Z"),
                  let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
                  let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
                  year >= 1900, (1...12).contains(month), day >= 1, day <= WallClockTime.daysIn(month: month, year: year),
                  hour < 24, minute < 60, second < 60 else { return nil }
            var milliseconds = 0
            if bytes.count == 24 {
                guard bytes[19] == UInt8(ascii: "."), let fraction = number(20, 3) else { return nil }
                milliseconds = fraction
            }
            let seconds = WallClockTime.days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
            // From 2001, as the format style counts: the same Date to the last bit.
            let sinceReference = seconds - 978_307_200
            guard sinceReference.magnitude >= 1 << 23 else { return nil }
            return Date(timeIntervalSinceReferenceDate: Double(sinceReference) + Double(milliseconds) / 1000)
        }
    }
}
