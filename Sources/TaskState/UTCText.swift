/// Dates as the state format writes them, `2026-11-22T10:00:00.250Z`, worked out with integer
/// arithmetic on the proleptic Gregorian calendar (``WallClockTime/civil(fromDays:)``).
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
}
