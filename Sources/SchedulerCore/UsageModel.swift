import FoundationEssentials
import Glibc
import TaskState

/// How likely a person is to use an app in each hour of the week, learned from its history of
/// uses: simple statistics that can be printed and checked by hand.
///
/// Each hour of each week in which the app was used counts once, `0.5^(age / halfLife)` of its
/// newest use, in its hour of the week (local time), so a burst of opens is one use and a habit
/// the person dropped fades. The likelihood of an hour is its weight divided by the weeks observed
/// (weighted the same way, from the first use to when the model was built, at least two): 1 means
/// "used in this hour every week". The predicted minute within an hour is the weighted mean of
/// those uses' minutes.
public struct UsageModel: Sendable, Equatable {
    public static let hoursPerWeek = 168
    /// A model needs two weeks of watching before any hour can count as a habit.
    public static let minimumWeeks = 2.0

    /// Weighted uses per hour of the week; hour 0 is Monday 00:00–01:00.
    public private(set) var weights: [Double]
    private var minuteSums: [Double]
    private var minuteSquares: [Double]
    /// Weighted weeks from the first use to ``builtAt``.
    public private(set) var weeksObserved: Double
    public let builtAt: Date
    public let zone: WallClockZone

    /// The model of `history` as of `now`, hours of the week read in `zone`.
    public init(history: UsageHistory, now: Date, halfLifeDays: Double, zone: WallClockZone) {
        self.builtAt = now
        self.zone = zone
        weights = Array(repeating: 0, count: Self.hoursPerWeek)
        minuteSums = Array(repeating: 0, count: Self.hoursPerWeek)
        minuteSquares = Array(repeating: 0, count: Self.hoursPerWeek)
        let halfLife = max(halfLifeDays, 0.001) * 86_400
        // Newest first, so each hour of the calendar counts its newest use only.
        var counted = Set<Int64>()
        for use in history.uses.reversed() where use <= now {
            let absoluteHour = Int64(((use.timeIntervalSince1970 + Double(zone.secondsFromGMT(for: use))) / 3600).rounded(.down))
            guard counted.insert(absoluteHour).inserted else { continue }
            let weight = pow(0.5, now.timeIntervalSince(use) / halfLife)
            let (hour, minute) = Self.hourOfWeek(use, zone: zone)
            weights[hour] += weight
            minuteSums[hour] += weight * Double(minute)
            minuteSquares[hour] += weight * Double(minute * minute)
        }
        // The integral of the decay over the span watched, in weeks.
        let span = max(0, now.timeIntervalSince(history.uses.first ?? now))
        let watched = halfLife / log(2) * (1 - pow(0.5, span / halfLife)) / (7 * 86_400)
        weeksObserved = watched
    }

    /// How likely a use is in `hour` of the week (0 = Monday 00:00), from 0 to 1.
    public func likelihood(hourOfWeek hour: Int) -> Double {
        guard weights.indices.contains(hour) else { return 0 }
        return min(1, weights[hour] / max(weeksObserved, Self.minimumWeeks))
    }

    /// A predicted use: when, and how likely the model thinks a use in that hour is.
    public struct Prediction: Sendable, Equatable {
        /// The weighted mean minute of the hour's uses.
        public var date: Date
        public var confidence: Double
        /// How far the uses of that hour spread around `date` (their weighted standard deviation):
        /// a refresh for an 08:10 habit that wanders by 15 minutes must come before 07:55.
        public var spread: TimeInterval = 0
    }

    /// The first hour after `now`, within `horizon`, whose likelihood reaches `minimumConfidence`,
    /// at the weighted mean minute of its uses.
    /// Hours are stepped by arithmetic from the hour of `now` (one calendar call, not one an
    /// hour): across a change of daylight saving time, that day's hours are off by one.
    public func nextUse(after now: Date, within horizon: TimeInterval, minimumConfidence: Double) -> Prediction? {
        let time = zone.time(of: now)
        let hourStart = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down) - Double(time.minute * 60 + time.second))
        let firstHour = Self.hourOfWeek(hourStart, zone: zone).hour
        let hours = Int((min(max(horizon, 0), 31 * 86_400) / 3600).rounded(.up)) + 1
        for step in 0..<max(hours, 1) {
            let start = hourStart.addingTimeInterval(Double(step) * 3600)
            let hour = (firstHour + step) % Self.hoursPerWeek
            let confidence = likelihood(hourOfWeek: hour)
            guard confidence >= minimumConfidence, weights[hour] > 0 else { continue }
            let mean = minuteSums[hour] / weights[hour]
            let variance = max(0, minuteSquares[hour] / weights[hour] - mean * mean)
            let date = start.addingTimeInterval(mean.rounded() * 60)
            guard date > now else { continue }
            guard date <= now.addingTimeInterval(horizon) else { return nil }
            return Prediction(date: date, confidence: confidence, spread: (variance.squareRoot() * 60).rounded())
        }
        return nil
    }

    /// The hour of the week (0 = Monday 00:00) and the minute within it.
    public static func hourOfWeek(_ date: Date, zone: WallClockZone) -> (hour: Int, minute: Int) {
        let time = zone.time(of: date)
        // Weekday 1 is Sunday; the grid starts on Monday.
        let day = (time.weekday + 5) % 7
        return (day * 24 + time.hour, time.minute)
    }
}
