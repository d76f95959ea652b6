import Foundation
import TaskState
import TortureCampaign

/// The default trace of `bgbench prediction`: 20 apps of one person over whole weeks from Monday
/// 2026-01-05 (UTC), drawn from a seeded generator so that a seed always gives the same trace.
/// The rhythms are listed in ``apps`` and in docs/performance.md.
enum SyntheticUsage {
    /// When an app is opened.
    enum Rhythm {
        /// On `days` (0 = Monday) with probability `chance`, at `minute` of the day ± `jitter`
        /// minutes (triangular: most opens close to the time).
        case habit(days: [Int], minute: Int, jitter: Int, chance: Double)
        /// On `days`, `perDay` opens a day at uniformly random minutes from `from` to `to`.
        case scattered(days: [Int], perDay: ClosedRange<Int>, from: Int, to: Int)
        /// About `perMonth` opens a month, on random days, at random minutes from 07:00 to 23:00.
        case rare(perMonth: Double)
    }

    static let weekdays = [0, 1, 2, 3, 4]
    static let everyDay = Array(0..<7)

    static func at(_ hour: Int, _ minute: Int) -> Int { hour * 60 + minute }

    /// The 20 apps and their rhythms.
    static let apps: [(name: String, rhythms: [Rhythm])] = [
        ("news", [.habit(days: weekdays, minute: at(8, 10), jitter: 10, chance: 0.9)]),
        ("weather", [.habit(days: everyDay, minute: at(7, 30), jitter: 15, chance: 0.85)]),
        ("podcasts", [.habit(days: weekdays, minute: at(8, 40), jitter: 10, chance: 0.8),
                      .habit(days: weekdays, minute: at(17, 50), jitter: 15, chance: 0.8)]),
        ("lunch", [.habit(days: weekdays, minute: at(12, 15), jitter: 15, chance: 0.8)]),
        ("tv", [.habit(days: everyDay, minute: at(20, 30), jitter: 20, chance: 0.85)]),
        ("recipes", [.habit(days: weekdays, minute: at(18, 30), jitter: 20, chance: 0.6)]),
        ("reader", [.habit(days: everyDay, minute: at(22, 45), jitter: 15, chance: 0.8)]),
        ("calendar", [.habit(days: weekdays, minute: at(8, 55), jitter: 5, chance: 0.95)]),
        ("fitness", [.habit(days: [0, 2, 4], minute: at(6, 45), jitter: 10, chance: 0.9)]),
        ("bank", [.habit(days: weekdays, minute: at(9, 30), jitter: 30, chance: 0.5)]),
        ("hiking", [.habit(days: [5], minute: at(9, 0), jitter: 30, chance: 0.8)]),
        ("brunch", [.habit(days: [6], minute: at(11, 0), jitter: 30, chance: 0.8)]),
        ("scores", [.habit(days: [5, 6], minute: at(15, 0), jitter: 60, chance: 0.7)]),
        ("messenger", [.scattered(days: everyDay, perDay: 6...10, from: at(8, 0), to: at(23, 0))]),
        ("mail", [.habit(days: weekdays, minute: at(9, 0), jitter: 20, chance: 0.9),
                  .habit(days: weekdays, minute: at(13, 0), jitter: 20, chance: 0.7),
                  .habit(days: weekdays, minute: at(17, 0), jitter: 20, chance: 0.7),
                  .scattered(days: everyDay, perDay: 0...2, from: at(8, 0), to: at(22, 0))]),
        ("social", [.scattered(days: everyDay, perDay: 3...6, from: at(7, 0), to: at(23, 30))]),
        ("travel", [.rare(perMonth: 3)]),
        ("taxes", [.rare(perMonth: 2)]),
        ("photo-editor", [.rare(perMonth: 4)]),
        ("parking", [.rare(perMonth: 3)]),
    ]

    /// Monday 2026-01-05 00:00 UTC.
    static let firstMonday = Date(timeIntervalSince1970: 1_767_571_200)

    /// `weeks` weeks of opens drawn with `seed`.
    static func trace(weeks: Int, seed: UInt64) -> UsageTrace {
        var random = SplitMix64(seed: seed)
        var opens: [UsageTrace.Open] = []
        for (name, rhythms) in apps {
            guard let app = try? Identifier(validating: "synthetic.\(name)") else { continue }
            for day in 0..<(weeks * 7) {
                let midnight = firstMonday.addingTimeInterval(Double(day) * 86_400)
                for minute in minutes(of: rhythms, weekday: day % 7, random: &random) {
                    // Seconds too, so that opens do not all fall on a whole minute.
                    let second = Double(minute * 60) + (random.unit() * 60).rounded(.down)
                    opens.append(UsageTrace.Open(app: app, date: midnight.addingTimeInterval(second)))
                }
            }
        }
        return UsageTrace(opens: opens)
    }

    /// The minutes of one day (0 = Monday) at which the rhythms open the app, within the day.
    private static func minutes(of rhythms: [Rhythm], weekday: Int, random: inout SplitMix64) -> [Int] {
        var result: [Int] = []
        for rhythm in rhythms {
            switch rhythm {
            case .habit(let days, let minute, let jitter, let chance):
                // Drawn whatever the day, so that one rhythm's days do not shift another's draws.
                let happens = random.unit() < chance
                let offset = (random.unit() + random.unit() - 1) * Double(jitter)
                if days.contains(weekday), happens { result.append(minute + Int(offset.rounded())) }
            case .scattered(let days, let perDay, let from, let to):
                let count = perDay.lowerBound + Int(random.unit() * Double(perDay.count))
                let draws = (0..<count).map { _ in from + Int(random.unit() * Double(to - from)) }
                if days.contains(weekday) { result += draws }
            case .rare(let perMonth):
                let happens = random.unit() < perMonth / 30
                let minute = at(7, 0) + Int(random.unit() * Double(at(16, 0)))
                if happens { result.append(minute) }
            }
        }
        return result.map { min(max($0, 0), 1439) }
    }
}

extension SplitMix64 {
    /// Uniform in [0, 1), from the top 53 bits: the same for a seed on every platform and
    /// Swift version, unlike the standard library's `random(in:using:)`.
    mutating func unit() -> Double { Double(next() >> 11) * 0x1p-53 }
}
