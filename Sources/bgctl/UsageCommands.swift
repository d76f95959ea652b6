import ArgumentParser
import FoundationEssentials
import SchedulerCore
import TaskState

/// `bgctl usage APP` and `bgctl usage import FILE`: what usage prediction has learnt, and seeding it.
struct UsageCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "usage",
        abstract: "When an app is used and when its refresh is planned (usage APP), or load a usage trace (usage import FILE).",
        subcommands: [UsageShow.self, UsageImport.self], defaultSubcommand: UsageShow.self)
}

struct UsageShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "The app's week as a 7×24 grid of how likely a use is, and the next predicted use.")

    @OptionGroup var locations: LocationOptions
    // Optional so that `bgctl usage` alone prints the group's help rather than a usage error.
    @Argument(help: "The app's identifier.") var app: String?
    @Flag(help: "Print JSON.") var json = false

    struct Report: Encodable {
        var app: Identifier
        var timeZone: String
        var uses: Int
        var lastUse: Date?
        /// Seven rows (Monday first) of 24 likelihoods, 0 to 1.
        var likelihood: [[Double]]
        var nextUse: Date?
        var nextUseConfidence: Double?
        var plannedRefresh: Date?
    }

    func run() throws {
        guard let app else { throw CleanExit.helpRequest(UsageCommand.self) }
        let appID = try identifier(app, "app")
        let now = Date()
        let snapshot = StateSnapshot.load(locations.paths)
        reportUnreadable(snapshot)
        let settings = readSettings(locations)
        let state = SchedulerState(reading: snapshot, settings: settings, catalog: ManifestCatalog.load(from: locations.appsDirectory), now: now)
        let history = state.usage[appID] ?? UsageHistory(app: appID)
        // The state's own model (built as of now), so the grid and the planned refresh agree.
        let model = state.usageModels[appID] ?? UsageModel(history: history, now: now, halfLifeDays: settings.usageHalfLifeDays,
                                                           zone: state.timeZone)
        let next = model.nextUse(after: now, within: settings.predictionHorizonSeconds, minimumConfidence: settings.predictionMinimumConfidence)
        let planned = state.requests.values.first { $0.app == appID && $0.kind == .appRefresh }
            .flatMap { state.usagePlan(for: $0, at: now) }?.launchAt
        let grid = (0..<7).map { day in (0..<24).map { model.likelihood(hourOfWeek: day * 24 + $0) } }
        if json {
            try printJSON(Report(app: appID, timeZone: state.timeZone.identifier, uses: history.uses.count, lastUse: history.lastUse,
                                 likelihood: grid, nextUse: next?.date, nextUseConfidence: next?.confidence, plannedRefresh: planned))
            return
        }
        print("\(appID): \(history.uses.count) use(s)\(history.lastUse.map { ", last \(DurationText.since($0, from: now))" } ?? ""); hours in \(state.timeZone.identifier)")
        print("     " + (0..<24).map { String(printf: "%-2ld", $0) }.joined(separator: " "))
        let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
        for (day, row) in grid.enumerated() {
            print(days[day] + "  " + row.map { Self.shade($0) + Self.shade($0) }.joined(separator: " "))
        }
        print("     ░ under 25%  ▒ under 50%  ▓ under 75%  █ 75% or more of weeks")
        if let next {
            let refresh = planned.map { "; refresh planned \(TimeOfDay.text($0, zone: state.timeZone, now: now))" } ?? ""
            print("next use: ~\(TimeOfDay.text(next.date, zone: state.timeZone, now: now)) "
                  + "(\(String(printf: "%.0f", next.confidence * 100))% of weeks)\(refresh)")
        } else {
            print("next use: none predicted within \(DurationText.compact(settings.predictionHorizonSeconds)); refreshes run at their earliest date")
        }
    }

    static func shade(_ likelihood: Double) -> String {
        switch likelihood {
        case ..<0.01: return "·"
        case ..<0.25: return "░"
        case ..<0.5: return "▒"
        case ..<0.75: return "▓"
        default: return "█"
        }
    }
}
