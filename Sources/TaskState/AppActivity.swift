import FoundationEssentials

/// An app's launches, expiries and kills hour by hour over the last day: what `bgtop`'s apps panel
/// counts as "the last 24 h". Kept in the app record by the scheduler, so the counts survive
/// restarts and a rotated event log, and cost at most 24 small entries per app.
public struct AppActivity: Codable, Hashable, Sendable {
    /// What is counted.
    public enum Kind: Sendable {
        case launch, expiry, kill
    }

    /// The counts of one clock hour (UTC).
    public struct Hour: Codable, Hashable, Sendable {
        /// The start of the hour.
        public var hour: Date
        public var launches: Int
        public var expiries: Int
        public var kills: Int

        public init(hour: Date, launches: Int = 0, expiries: Int = 0, kills: Int = 0) {
            self.hour = hour
            self.launches = launches
            self.expiries = expiries
            self.kills = kills
        }
    }

    /// Totals over a window.
    public struct Totals: Hashable, Sendable {
        public var launches = 0
        public var expiries = 0
        public var kills = 0

        public init(launches: Int = 0, expiries: Int = 0, kills: Int = 0) {
            self.launches = launches
            self.expiries = expiries
            self.kills = kills
        }
    }

    /// The hours that had something, oldest first; hours older than a day are dropped.
    public var hours: [Hour]

    public init(hours: [Hour] = []) {
        self.hours = hours
    }

    /// How many hours are kept: the current one and the 23 before it.
    public static let keptHours = 24

    /// Counts one `kind` at `now`, dropping hours that fell out of the day.
    ///
    /// Hours after `now` were written before the clock stepped back: they are merged into the
    /// current hour, not dropped, so a clock change loses no count. Duplicate hours (the record is
    /// input) are merged too, which leaves at most ``keptHours`` entries.
    public mutating func count(_ kind: Kind, at now: Date) {
        let hour = Self.hourStart(of: now)
        let oldest = hour.addingTimeInterval(-Double(Self.keptHours - 1) * 3600)
        var current = Hour(hour: hour)
        var byHour: [Date: Hour] = [:]
        for entry in hours where entry.hour >= oldest {
            if entry.hour >= hour {
                current.add(entry)
            } else {
                byHour[entry.hour, default: Hour(hour: entry.hour)].add(entry)
            }
        }
        switch kind {
        case .launch: current.launches = SafeNumber.sum(current.launches, 1)
        case .expiry: current.expiries = SafeNumber.sum(current.expiries, 1)
        case .kill: current.kills = SafeNumber.sum(current.kills, 1)
        }
        hours = byHour.values.sorted { $0.hour < $1.hour } + [current]
    }

    /// The totals of the hours within the day before `now` (the current hour included), whatever
    /// was last written.
    public func lastDay(at now: Date) -> Totals {
        let oldest = Self.hourStart(of: now).addingTimeInterval(-Double(Self.keptHours - 1) * 3600)
        var totals = Totals()
        for hour in hours where hour.hour >= oldest && hour.hour <= now {
            totals.launches = SafeNumber.sum(totals.launches, hour.launches)
            totals.expiries = SafeNumber.sum(totals.expiries, hour.expiries)
            totals.kills = SafeNumber.sum(totals.kills, hour.kills)
        }
        return totals
    }

    static func hourStart(of date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
    }
}

extension AppActivity.Hour {
    /// Missing counts are 0: an hour is statistics, and a person may write only the one they mean.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(hour: try container.decode(Date.self, forKey: .hour),
                  launches: try container.decodeIfPresent(Int.self, forKey: .launches) ?? 0,
                  expiries: try container.decodeIfPresent(Int.self, forKey: .expiries) ?? 0,
                  kills: try container.decodeIfPresent(Int.self, forKey: .kills) ?? 0)
    }

    /// Adds `other`'s counts to these, saturating.
    mutating func add(_ other: Self) {
        launches = SafeNumber.sum(launches, other.launches)
        expiries = SafeNumber.sum(expiries, other.expiries)
        kills = SafeNumber.sum(kills, other.kills)
    }
}

extension AppActivity {
    private enum CodingKeys: String, CodingKey {
        case hours
    }

    /// Never fails: the activity is statistics, and a malformed one must not make the whole app
    /// record (its switch, its throttle) unreadable. What cannot be read is left out; a bad
    /// `activity` becomes an empty one. Duplicate hours are merged.
    public init(from decoder: any Decoder) throws {
        var entries: [Hour] = []
        if let container = try? decoder.container(keyedBy: CodingKeys.self),
           var list = try? container.nestedUnkeyedContainer(forKey: .hours) {
            while !list.isAtEnd {
                guard let entry = try? list.decode(LenientHour.self) else { break }
                if let hour = entry.hour { entries.append(hour) }
            }
        }
        var byHour: [Date: Hour] = [:]
        for entry in entries { byHour[entry.hour, default: Hour(hour: entry.hour)].add(entry) }
        self.init(hours: byHour.values.sorted { $0.hour < $1.hour })
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(hours, forKey: .hours)
    }

    /// One element of `hours`, or nil for one that is not an hour; decoding it always moves on.
    private struct LenientHour: Decodable {
        let hour: Hour?

        init(from decoder: any Decoder) throws {
            hour = try? Hour(from: decoder)
        }
    }
}
