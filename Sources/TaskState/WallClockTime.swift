/// A calendar date and a clock time, as a person reads them in some zone (``WallClockZone``):
/// proleptic Gregorian, no zone of its own.
public struct WallClockTime: Sendable, Hashable, CustomStringConvertible {
    public var year: Int
    /// 1 to 12.
    public var month: Int
    /// 1 to 31.
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int
    /// 1 is Sunday, 7 Saturday (as Foundation's `Calendar` counts).
    public var weekday: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.init(year: year, month: month, day: day, hour: hour, minute: minute, second: second,
                  weekday: Self.weekday(ofDay: Self.days(year: year, month: month, day: day)))
    }

    init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int) {
        (self.year, self.month, self.day, self.hour, self.minute, self.second, self.weekday) =
            (year, month, day, hour, minute, second, weekday)
    }

    /// The time `seconds` after 1970-01-01 00:00:00 on the same clock.
    init(secondsSince1970 seconds: Int64) {
        let (days, remainder) = Self.floorDivision(seconds, 86_400)
        let (year, month, day) = Self.civil(fromDays: days)
        self.init(year: year, month: month, day: day, hour: Int(remainder / 3600), minute: Int(remainder % 3600 / 60),
                  second: Int(remainder % 60), weekday: Self.weekday(ofDay: days))
    }

    /// `2026-11-20 08:10:00`.
    public var description: String {
        String(printf: "%04ld-%02ld-%02ld %02ld:%02ld:%02ld", year, month, day, hour, minute, second)
    }

    /// Seconds from 1970-01-01 00:00:00 to this time on the same clock.
    var secondsSince1970: Int64 {
        Self.days(year: year, month: month, day: day) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// The same clock time `count` days later (earlier when negative).
    public func addingDays(_ count: Int) -> WallClockTime {
        let (year, month, day) = Self.civil(fromDays: Self.days(year: year, month: month, day: day) + Int64(count))
        return WallClockTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to a date (Howard Hinnant's `days_from_civil`).
    static func days(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * Int64(month > 2 ? month - 3 : month + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The date `days` after 1970-01-01 (`civil_from_days`).
    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * shiftedMonth + 2) / 5 + 1)
        let month = Int(shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9)
        return (Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0), month, day)
    }

    /// 1970-01-01 was a Thursday (weekday 5).
    static func weekday(ofDay days: Int64) -> Int {
        Int(floorDivision(days + 4, 7).remainder) + 1
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (quotient: Int64, remainder: Int64) {
        let quotient = value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
        return (quotient, value - quotient * divisor)
    }
}
