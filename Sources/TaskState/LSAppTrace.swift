import FoundationEssentials

/// A usage trace in the LSApp dataset's layout: tab-separated `user_id`, `session_id`,
/// `timestamp` (`YYYY-MM-DD HH:MM:SS`, local time), `app_name`, `event_type`, with or without its
/// header line. Only `Opened` rows are uses.
public enum LSAppTrace {
    /// One `Opened` row.
    public struct Open: Sendable, Hashable {
        public var user: String
        public var app: String
        public var date: Date
        /// 1-based, as an editor counts.
        public var line: Int
    }

    /// Why a trace cannot be read: the line, and what is wrong with it.
    public struct Malformed: Error, Equatable, Sendable, CustomStringConvertible {
        public var line: Int
        public var reason: String
        public var description: String { "line \(line): \(reason)" }

        public init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    /// The `Opened` rows of `text`, timestamps read in `zone`. The first bad line stops it.
    public static func opens(in text: String, zone: WallClockZone) throws(Malformed) -> [Open] {
        var opens: [Open] = []
        var number = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let row = line.hasSuffix("\r") ? line.dropLast() : line
            if row.isEmpty || (number == 1 && row.hasPrefix("user_id")) { continue }
            let fields = row.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 5 else {
                throw Malformed(line: number, reason: "expected 5 tab-separated fields (user_id, session_id, timestamp, app_name, event_type), found \(fields.count)")
            }
            guard fields[4] == "Opened" else { continue }
            guard let date = date(fields[2], zone: zone) else {
                throw Malformed(line: number, reason: "bad timestamp '\(fields[2].prefix(40))': expected YYYY-MM-DD HH:MM:SS")
            }
            guard !fields[3].isEmpty else { throw Malformed(line: number, reason: "empty app_name") }
            opens.append(Open(user: String(fields[0]), app: String(fields[3]), date: date, line: number))
        }
        return opens
    }

    /// `YYYY-MM-DD HH:MM:SS`, read digit by digit: a real trace has millions of rows.
    static func date(_ text: Substring, zone: WallClockZone) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 19, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: " "),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
              let minute = number(14..<16), let second = number(17..<19) else { return nil }
        // Checked whole: February 31st is refused, not rolled over into March.
        return zone.date(of: WallClockTime(year: year, month: month, day: day, hour: hour, minute: minute, second: second))
    }
}
