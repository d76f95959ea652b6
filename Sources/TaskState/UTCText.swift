/// Dates as the state format writes them, `2026-11-22T10:00:00.250Z`, worked out with integer
/// arithmetic on the proleptic Gregorian calendar.
///
/// Every file, outcome, event and journal record carries dates, and `Date.ISO8601FormatStyle`
/// took about 8 000 instructions for each, 7% of the scheduler's work per socket command; this
/// takes a few dozen. `JSONFormatTests` holds it to the format style's text over the whole
/// writable range.
enum UTCText {
    /// `seconds` since 1970 (UTC) and the `milliseconds` after them (0 to 999), for years 1 to 9999.
    static func format(seconds: Int64, milliseconds: Int) -> String {
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let second = Int(seconds - days * 86_400)
        let (year, month, day) = civil(fromDays: days)
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
        digits(Int(year), 4); bytes.append(UInt8(ascii: "-"))
        digits(month, 2); bytes.append(UInt8(ascii: "-"))
        digits(day, 2); bytes.append(UInt8(ascii: "T"))
        digits(second / 3600, 2); bytes.append(UInt8(ascii: ":"))
        digits(second / 60 % 60, 2); bytes.append(UInt8(ascii: ":"))
        digits(second % 60, 2); bytes.append(UInt8(ascii: "."))
        digits(milliseconds, 3); bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Year, month (1–12) and day (1–31) of the day `days` after 1970-01-01: Howard Hinnant's
    /// `civil_from_days` (https://howardhinnant.github.io/date_algorithms.html).
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
