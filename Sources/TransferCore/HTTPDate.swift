#if canImport(Glibc)
import Glibc
#endif

/// HTTP dates (RFC 9110 §5.6.7) as seconds since the Unix epoch.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longWeekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// Parses the three forms a recipient must accept (§5.6.7): IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`)
    /// and asctime (`Sun Nov  6 08:49:37 1994`). `nil` for anything else or an impossible date.
    public static func parse(_ text: String) -> Int64? {
        let value = text.trimmingHTTPWhitespace
        guard value.utf8.count <= 40 else { return nil }
        let words = value.split(separator: " ", omittingEmptySubsequences: true)
        if words.count == 6, words[0].hasSuffix(","), weekdays.contains(words[0].dropLast().asciiLowercased), words[5] == "GMT" {
            // IMF-fixdate: day-name "," SP 2DIGIT SP month SP 4DIGIT SP time SP "GMT"
            guard words[1].utf8.count == 2, words[3].utf8.count == 4,
                  let day = parseDigits(words[1]), let month = month(words[2]), let year = parseDigits(words[3]) else { return nil }
            return build(year: year, month: month, day: day, time: words[4])
        }
        if words.count == 4, words[0].hasSuffix(","), longWeekdays.contains(words[0].dropLast().asciiLowercased), words[3] == "GMT" {
            // rfc850-date: day-name-l "," SP 2DIGIT "-" month "-" 2DIGIT SP time SP "GMT"
            let parts = words[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].utf8.count == 2, parts[2].utf8.count == 2,
                  let day = parseDigits(parts[0]), let month = month(parts[1]), let short = parseDigits(parts[2]) else { return nil }
            // §5.6.7: a two-digit year more than 50 years in the future means the past century.
            let year = short + (short >= 70 ? 1900 : 2000)
            return build(year: year, month: month, day: day, time: words[2])
        }
        if words.count == 5, weekdays.contains(words[0].asciiLowercased) {
            // asctime-date: day-name SP month SP ( 2DIGIT / ( SP DIGIT )) SP time SP 4DIGIT
            guard let month = month(words[1]), (1...2).contains(words[2].utf8.count), let day = parseDigits(words[2]),
                  words[4].utf8.count == 4, let year = parseDigits(words[4]) else { return nil }
            return build(year: year, month: month, day: day, time: words[3])
        }
        return nil
    }

    /// An IMF-fixdate for `seconds` since the epoch.
    public static func format(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let names = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        // §5.6.7: the year is 4DIGIT, so years before 1000 keep their leading zeros.
        let year = String(parts.tm_year + 1900)
        let paddedYear = String(repeating: "0", count: max(0, 4 - year.count)) + year
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(names[Int(parts.tm_mon)]) \(paddedYear) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }

    private static func month<S: StringProtocol>(_ name: S) -> Int64? {
        months.firstIndex(of: name.asciiLowercased).map { Int64($0) + 1 }
    }

    /// Seconds since the epoch for a civil date and an `HH:MM:SS` time, or `nil` when out of range.
    private static func build<S: StringProtocol>(year: Int64, month: Int64, day: Int64, time: S) -> Int64? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.utf8.count == 2 }),
              let hour = parseDigits(clock[0]), let minute = parseDigits(clock[1]), let second = parseDigits(clock[2]),
              hour < 24, minute < 60, second <= 60, (1...12).contains(month), (1...9999).contains(year) else { return nil }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let lengths: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...lengths[Int(month - 1)]).contains(day) else { return nil }
        return daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + min(second, 59)
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
