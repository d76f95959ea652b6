import ArgumentParser
import FoundationEssentials
import SchedulerCore
import TaskState

struct Apps: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apps",
        abstract: "App manifests, whether each app is enabled, its throttle state, and manifest errors.")

    @OptionGroup var locations: LocationOptions
    @Flag(help: "Print JSON.") var json = false

    struct Entry: Encodable {
        var id: Identifier
        var executable: String
        var backgroundModes: [BackgroundMode]
        var permittedIdentifiers: [Identifier]
        var enabled: Bool
        var throttleLevel: Int
        var throttledUntil: Date?
        var launchCount: Int
        var killCount: Int
        var lastLaunchAt: Date?
        /// The last launch's reason (`appRefresh`, `processing`, `simulated`, ...).
        var lastLaunchReason: String?
        /// The overrun that last throttled the app.
        var throttleCause: String?
        /// Launches, expiries and kills in the last 24 hours (from the record's hourly counts).
        var last24h: LastDay
        /// The app's running process that takes due tasks, if one is attached.
        var attachedProcess: AttachedProcess?
        /// Pushes the app may receive per rolling hour, after cuts; absent without the
        /// `remote-notification` mode.
        var pushBudgetPerHour: Int?
        /// What is left of it now.
        var pushBudgetLeft: Int?
        var lastPushResult: FetchResult?
        /// When the CPU monitor last expired a task of the app, and why (`cpuLimit: …` or
        /// `memoryLimit: …`, with what was measured); absent when it never did.
        var lastCpuLimitAt: Date?
        var lastCpuLimitReason: String?
        /// The manifest's push subscriptions, as the scheduler's subscribers last reported them
        /// (`state` is `unknown` until a scheduler has connected one).
        var pushSubscriptions: [Subscription]
        /// The app's standing for VoIP pushes (strikes, blocked, the report it owes), once it has
        /// had one; `voipState` is its one word (`ok`, `ringing`, `N strike(s)`, `blocked`).
        var voip: VoIPState?
        var voipState: String?
    }

    struct LastDay: Encodable {
        var launches: Int
        var expiries: Int
        var kills: Int
    }

    struct Subscription: Encodable {
        var url: String
        var state: String
        var lastMessageId: String?
        var lastError: String?
        var failures: Int
        var nextAttemptAt: Date?
    }

    struct Report: Encodable {
        var apps: [Entry]
        var manifestErrors: [ManifestProblem]
    }

    static func lastDay(_ record: AppRecord, at now: Date) -> LastDay {
        let totals = record.activity?.lastDay(at: now) ?? AppActivity.Totals()
        return LastDay(launches: totals.launches, expiries: totals.expiries, kills: totals.kills)
    }

    func run() throws {
        let now = Date()
        let catalog = ManifestCatalog.load(from: locations.appsDirectory)
        let snapshot = StateSnapshot.load(locations.paths)
        let state = SchedulerState(reading: snapshot, settings: readSettings(locations), catalog: catalog, now: now)
        let statuses = Dictionary(snapshot.subscriptions.map { ($0.app, $0) }, uniquingKeysWith: { a, _ in a })
        // The file keeps what the last scheduler knew, and a killed one could not say it went:
        // with no scheduler holding the lock, no stream is open.
        let schedulerRuns = StateLock.holder(locations.paths) != nil
        let entries = catalog.manifests.values.sorted { $0.id < $1.id }.map { manifest in
            let record = state.apps[manifest.id] ?? AppRecord(id: manifest.id)
            let pushes = manifest.backgroundModes.contains(.remoteNotification)
            let subscriptions = manifest.push.map { subscription in
                let stream = statuses[manifest.id]?.streams.first { $0.url == subscription.ntfy }
                let state = stream.map { schedulerRuns ? $0.state.rawValue : "stopped" } ?? "unknown"
                return Subscription(url: URLText.hidingCredentials(subscription.ntfy), state: state,
                                    lastMessageId: stream?.lastMessageID, lastError: stream?.lastError,
                                    failures: stream?.failures ?? 0, nextAttemptAt: stream?.nextAttemptAt)
            }
            return Entry(id: manifest.id, executable: manifest.executable, backgroundModes: manifest.backgroundModes,
                         permittedIdentifiers: manifest.permittedIdentifiers, enabled: record.enabled,
                         throttleLevel: record.throttleLevel, throttledUntil: record.throttledUntil,
                         launchCount: record.launchCount, killCount: record.killCount,
                         lastLaunchAt: record.lastLaunchAt, lastLaunchReason: record.lastLaunchReason,
                         throttleCause: record.throttleCause, last24h: Self.lastDay(record, at: now),
                         attachedProcess: record.attachedProcess,
                         pushBudgetPerHour: pushes ? state.pushBudget(of: manifest.id) : nil,
                         pushBudgetLeft: pushes ? state.pushBudgetLeft(of: manifest.id, at: now) : nil,
                         lastPushResult: record.lastPushResult, lastCpuLimitAt: record.lastCpuLimitAt,
                         lastCpuLimitReason: record.lastCpuLimitReason, pushSubscriptions: subscriptions,
                         voip: record.voip, voipState: record.voip?.summary)
        }
        if json {
            try printJSON(Report(apps: entries, manifestErrors: catalog.problems))
            return
        }
        var table = TextTable("APP", "ENABLED", "MODES", "THROTTLE", "LAUNCHES", "KILLS", "PUSHES", "VOIP", "CPU LIMIT", "EXECUTABLE")
        for entry in entries {
            let throttle = entry.throttledUntil.flatMap { $0 > now ? "level \(entry.throttleLevel), \(DurationText.until($0, from: now))" : nil } ?? "-"
            let pushes = entry.pushBudgetPerHour.map { "\(entry.pushBudgetLeft ?? 0)/\($0) left" } ?? "-"
            table.add(entry.id.rawValue, entry.enabled ? "yes" : "no", entry.backgroundModes.map(\.rawValue).joined(separator: ","),
                      throttle, "\(entry.launchCount)", "\(entry.killCount)", pushes, entry.voipState ?? "-",
                      entry.lastCpuLimitAt.map { "\(DurationText.since($0, from: now)): \(entry.lastCpuLimitReason ?? "")" } ?? "-",
                      entry.executable)
        }
        print(entries.isEmpty ? TerminalText.escaped("no apps in \(locations.appsDirectory)") : table.render())
        let subscribed = entries.filter { !$0.pushSubscriptions.isEmpty }
        if !subscribed.isEmpty {
            print("\nPUSH SUBSCRIPTIONS")
            for entry in subscribed {
                for subscription in entry.pushSubscriptions {
                    var line = "\(entry.id) \(subscription.url): \(subscription.state)"
                    if let error = subscription.lastError, subscription.state == "failing" {
                        line += " (\(subscription.failures) failures, last: \(error)"
                        line += subscription.nextAttemptAt.map { "; next try \(DurationText.until($0, from: now)))" } ?? ")"
                    }
                    printLine(line)
                }
            }
        }
        if !catalog.problems.isEmpty {
            print("\nMANIFEST ERRORS (\(catalog.problems.count))")
            for problem in catalog.problems { printLine("\(problem.file): \(problem.reason)") }
        }
    }
}

struct AppSwitch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Switch background work on or off for an app (app enable|disable APP), or say a person used it (app used APP [--at DATE]).")

    enum Action: String, ExpressibleByArgument, CaseIterable { case enable, disable, used }

    @OptionGroup var locations: LocationOptions
    // Optional so that `bgctl app` alone prints this help (a command group with nothing chosen).
    @Argument(help: "enable, disable or used.") var action: Action?
    @Argument(help: "The app's identifier.") var app: String?
    @Option(help: "used: when (an ISO 8601 date within the last year, default now).") var at: String?

    func validate() throws {
        if at != nil && action != .used { throw ValidationError("--at goes with 'used' only") }
        if action != nil && app == nil { throw ValidationError("Missing expected argument '<app>'") }
    }

    func run() throws {
        guard let action, let app else { throw CleanExit.helpRequest(self) }
        let appID = try identifier(app, "app")
        switch action {
        case .enable, .disable:
            try CommandSender(locations: locations).send(.setAppEnabled(app: appID, enabled: action == .enable))
        case .used:
            let now = Date()
            try CommandSender(locations: locations).send(.appUsed(app: appID, uses: [try at.map { try Self.useDate($0, now: now) } ?? now]))
        }
    }

    /// A use's date: ISO 8601, within the last year and not in the future.
    static func useDate(_ text: String, now: Date) throws -> Date {
        guard let date = JSONFormat.date(from: text) else {
            throw ValidationError("bad --at '\(text)': expected an ISO 8601 date like 2026-11-22T08:10:00Z")
        }
        do {
            try NumericBounds.check(date: date, "--at", in: now.addingTimeInterval(-UsageHistory.maximumAge)...now.addingTimeInterval(60))
        } catch {
            throw ValidationError(error.description)
        }
        return date
    }
}

struct ConditionsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "conditions",
        abstract: "Show conditions, or override them for testing: conditions set power=ac|battery network=up|down idle=yes|no lowpower=on|off expensive=on|off; conditions clear.")

    @OptionGroup var locations: LocationOptions
    @Argument(help: "Nothing, 'set KEY=VALUE...' or 'clear'.") var words: [String] = []
    @Flag(help: "Print JSON.") var json = false

    static let values: [Conditions.Name: [String: Bool]] = [
        .power: ["ac": true, "battery": false],
        .network: ["up": true, "down": false],
        .idle: ["yes": true, "no": false],
        .lowpower: ["on": true, "off": false],
        .expensive: ["on": true, "off": false],
    ]

    func parseOverrides(_ assignments: ArraySlice<String>) throws -> ConditionOverrides {
        var overrides = ConditionOverrides()
        guard !assignments.isEmpty else { throw ValidationError("conditions set needs KEY=VALUE, like power=battery") }
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let name = Conditions.Name(rawValue: parts[0]), let table = Self.values[name] else {
                throw ValidationError("bad condition '\(assignment)': keys are power, network, idle, lowpower, expensive")
            }
            guard let value = table[parts[1]] else {
                throw ValidationError("bad value for \(name.rawValue): use \(table.keys.sorted().joined(separator: " or "))")
            }
            overrides[name] = value
        }
        return overrides
    }

    func run() throws {
        switch words.first {
        case nil:
            guard let record = StateSnapshot.load(locations.paths).conditions else {
                printError("no conditions recorded yet in \(locations.paths.root): start bgtaskd")
                throw BGCtl.Exit.notRunning
            }
            if json {
                try printJSON(record)
            } else {
                print(ConditionsDescription.describe(record))
            }
        case "set":
            try CommandSender(locations: locations).send(.setConditions(try parseOverrides(words.dropFirst())))
        case "clear":
            guard words.count == 1 else { throw ValidationError("conditions clear takes no values") }
            try CommandSender(locations: locations).send(.clearConditions)
        case let word?:
            throw ValidationError("unknown conditions action '\(word)': use set or clear")
        }
    }
}
