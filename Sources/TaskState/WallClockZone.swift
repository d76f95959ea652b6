import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A time zone as the programs use it: a name, and the offset from UTC at any moment.
///
/// ``system`` is the user's zone as the C library reads it (`TZ`, else `/etc/localtime`), from the
/// system's zone files, daylight saving time included: what `date` prints. FoundationEssentials
/// alone knows no zone but GMT, and Foundation's own needs ICU, whose data is most of a program's
/// size; the C library already holds what is needed.
public struct WallClockZone: Sendable, Hashable, CustomStringConvertible {
    /// `Europe/Paris`, `UTC`, or `TZ` as given when it is not a zone file's name.
    public let identifier: String
    /// `nil`: the C library's rules for the process's zone.
    private let fixedOffset: Int?

    /// Coordinated Universal Time.
    public static let utc = WallClockZone(identifier: "UTC", fixedOffset: 0)

    /// A zone `seconds` east of UTC all year round.
    public static func fixed(secondsFromGMT seconds: Int, identifier: String) -> WallClockZone {
        WallClockZone(identifier: identifier, fixedOffset: seconds)
    }

    /// The user's zone: `TZ` (`Europe/Paris`, `:Europe/Paris`, a zone file's path, or a POSIX rule
    /// such as `EST5EDT`), else the zone `/etc/localtime` links to (else `/etc/timezone`'s), else UTC.
    /// Read once: a process's `TZ` and links do not change under it.
    public static let system: WallClockZone = {
        SystemZone.prepare()
        return WallClockZone(identifier: SystemZone.identifier(), fixedOffset: nil)
    }()

    public var description: String { identifier }

    /// Seconds east of UTC at `date`.
    public func secondsFromGMT(for date: Date) -> Int {
        if let fixedOffset { return fixedOffset }
        return SystemZone.local(Self.seconds(date)).gmtoff
    }

    /// The calendar date and clock time at `date` in this zone.
    public func time(of date: Date) -> WallClockTime {
        let seconds = Self.seconds(date)
        if let fixedOffset { return WallClockTime(secondsSince1970: seconds + Int64(fixedOffset)) }
        return SystemZone.local(seconds).time
    }

    /// The moment a clock in this zone shows `time`; for a time that a change of daylight saving
    /// time skips or repeats, the C library's choice (`mktime`). `nil` for a date that does not
    /// exist (February 30th) or outside years 1–9999.
    public func date(of time: WallClockTime) -> Date? {
        guard (1...9999).contains(time.year), (1...12).contains(time.month),
              (1...WallClockTime.daysIn(month: time.month, year: time.year)).contains(time.day),
              (0..<24).contains(time.hour), (0..<60).contains(time.minute), (0...60).contains(time.second) else { return nil }
        if let fixedOffset {
            return Date(timeIntervalSince1970: Double(time.secondsSince1970 - Int64(fixedOffset)))
        }
        return SystemZone.moment(of: time).map { Date(timeIntervalSince1970: Double($0)) }
    }

    /// Whole seconds since 1970 (rounded down), held to years 1–9999 so that no date traps.
    static func seconds(_ date: Date) -> Int64 {
        let value = date.timeIntervalSince1970
        guard value.isFinite else { return 0 }
        return Int64(min(max(value, -62_135_596_800), 253_402_300_799).rounded(.down))
    }
}

/// The process's own zone through the C library.
private enum SystemZone {
    private static let prepared: Bool = {
        tzset()
        return true
    }()

    static func prepare() { _ = prepared }

    static func local(_ seconds: Int64) -> (time: WallClockTime, gmtoff: Int) {
        prepare()
        var moment = time_t(seconds)
        var parts = tm()
        guard localtime_r(&moment, &parts) != nil else {
            return (WallClockTime(secondsSince1970: seconds), 0)
        }
        let time = WallClockTime(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday),
                                 hour: Int(parts.tm_hour), minute: Int(parts.tm_min), second: Int(parts.tm_sec),
                                 weekday: Int(parts.tm_wday) + 1)
        return (time, Int(parts.tm_gmtoff))
    }

    /// For a time a change of daylight saving time repeats, the earlier of the two moments:
    /// `mktime` with `tm_isdst = -1` picks by the offset of its previous call, so the same row
    /// of a trace would otherwise read differently depending on the rows before it.
    static func moment(of time: WallClockTime) -> Int64? {
        let candidates = [0, 1].compactMap { moment(of: time, daylightSaving: Int32($0)) }
            .filter { local($0).time == time }
        if let earliest = candidates.min() { return earliest }
        // A time the change skips: as `mktime` reads it (02:30 as 03:30 where 02:00 becomes 03:00).
        return moment(of: time, daylightSaving: -1)
    }

    private static func moment(of time: WallClockTime, daylightSaving: Int32) -> Int64? {
        prepare()
        var parts = tm()
        parts.tm_year = Int32(time.year - 1900)
        parts.tm_mon = Int32(time.month - 1)
        parts.tm_mday = Int32(time.day)
        parts.tm_hour = Int32(time.hour)
        parts.tm_min = Int32(time.minute)
        parts.tm_sec = Int32(time.second)
        parts.tm_isdst = daylightSaving
        let result = mktime(&parts)
        // -1 is also 1969-12-31 23:59:59 UTC; errno tells them apart only if cleared first, and no
        // trace or command speaks of that second.
        return result == -1 ? nil : Int64(result)
    }

    static func identifier() -> String {
        if let variable = getenv("TZ") {
            var text = String(cString: variable)
            if text.hasPrefix(":") { text.removeFirst() }
            if text.isEmpty { return "UTC" }
            if let name = zoneName(inPath: text) { return name }
            // A name the C library finds no zone file for is UTC to it (a POSIX rule such as
            // `EST5EDT` always holds a digit): say so rather than print a zone not in use.
            let folder = getenv("TZDIR").map { String(cString: $0) } ?? "/usr/share/zoneinfo"
            if text.hasPrefix("/") || access("\(folder)/\(text)", R_OK) == 0 || text.contains(where: \.isNumber) { return text }
            return "UTC"
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/etc/localtime", &buffer, buffer.count - 1)
        if count > 0 {
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let name = zoneName(inPath: target) { return name }
        }
        // Debian's name for a zone copied into /etc/localtime rather than linked.
        if let data = try? StateFiles.read("/etc/timezone", maximumSize: 4096, followingLinks: true),
           let name = String(decoding: data, as: UTF8.self).split(separator: "\n").first?.trimmedWhitespace(), !name.isEmpty {
            return name
        }
        return "UTC"
    }

    /// `Europe/Paris` from `/usr/share/zoneinfo/Europe/Paris`.
    private static func zoneName(inPath path: String) -> String? {
        guard let marker = path.firstRange(of: "zoneinfo/") else { return nil }
        let name = String(path[marker.upperBound...])
        return name.isEmpty ? nil : name
    }
}
