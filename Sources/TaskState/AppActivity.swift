import Foundation

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
    public mutating func count(_ kind: Kind, at now: Date) {
        let hour = Self.hourStart(of: now)
        hours.removeAll { $0.hour <= hour.addingTimeInterval(-Double(Self.keptHours) * 3600) || $0.hour > hour }
        // Searched, not assumed last: the record is input and its order is not guaranteed.
        if !hours.contains(where: { $0.hour == hour }) { hours.append(Hour(hour: hour)) }
        let index = hours.firstIndex { $0.hour == hour }!
        switch kind {
        case .launch: hours[index].launches = Self.sum(hours[index].launches, 1)
        case .expiry: hours[index].expiries = Self.sum(hours[index].expiries, 1)
        case .kill: hours[index].kills = Self.sum(hours[index].kills, 1)
        }
    }

    /// The totals of the hours within the day before `now` (the current hour included), whatever
    /// was last written.
    public func lastDay(at now: Date) -> Totals {
        let oldest = Self.hourStart(of: now).addingTimeInterval(-Double(Self.keptHours - 1) * 3600)
        var totals = Totals()
        for hour in hours where hour.hour >= oldest && hour.hour <= now {
            totals.launches = Self.sum(totals.launches, hour.launches)
            totals.expiries = Self.sum(totals.expiries, hour.expiries)
            totals.kills = Self.sum(totals.kills, hour.kills)
        }
        return totals
    }

    static func hourStart(of date: Date) -> Date {
        Date(timeIntervalSince1970: (date.timeIntervalSince1970 / 3600).rounded(.down) * 3600)
    }

    /// `a + b`, stopping at the ends of `Int`: the record is input, and a count written as
    /// `Int.max` by someone else must not trap the scheduler or the dashboard.
    private static func sum(_ a: Int, _ b: Int) -> Int {
        let (result, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : result
    }
}
