import FoundationEssentials
import Glibc
import TaskState

/// The scheduler's tunables: `<config>/settings.json`. Every key is optional; missing keys take
/// the defaults below. See `docs/configuration.md`.
public struct SchedulerSettings: Codable, Hashable, Sendable {
    /// Runtime budget of an app refresh task (Apple: about 30 s).
    public var appRefreshBudgetSeconds: Double = 30
    /// Runtime budget of a processing task.
    public var processingBudgetSeconds: Double = 600
    /// Runtime budget of a finishing task (`beginBackgroundTask`).
    public var finishingBudgetSeconds: Double = 30
    /// Time between the expiration signal and the kill of an app that has not completed.
    public var expirationGraceSeconds: Double = 5
    /// A launch waits at most this long after it became ready for requests of any app coming due
    /// meanwhile, so that they go out in one wake-up (`docs/scheduling.md#launching-and-coalescing`).
    /// Ten minutes: a day of 20 apps' refreshes then wakes the machine 3.46× less often than
    /// launching each at its date; 7.5 minutes gives 2.95× (`bgbench wakeups`, docs/performance.md).
    public var coalescingWindowSeconds: Double = 600
    /// Launched processes of the policy running at once; a larger burst starts in turn as earlier
    /// launches end. Chosen with `bgbench wakeups` (see `docs/performance.md`).
    public var maxConcurrentLaunches: Int = 4
    /// First throttle delay after an overrun; it doubles with each overrun in a row.
    public var throttleInitialSeconds: Double = 60
    /// The longest throttle delay.
    public var throttleMaximumSeconds: Double = 3600
    /// At most this many app refresh requests pending per app.
    public var maximumPendingAppRefresh: Int = 1
    /// At most this many processing requests pending per app.
    public var maximumPendingProcessing: Int = 10
    /// The machine is idle while the one-minute load average is under this.
    public var idleLoadAverage: Double = 1.0
    /// On battery at or under this charge (percent), the machine is in low power.
    public var lowPowerBatteryPercent: Int = 20
    /// How often conditions are probed again, only while a request waits for one.
    public var conditionsRecheckSeconds: Double = 30
    /// `events.jsonl` is rotated when it reaches this size.
    public var eventLogMaximumBytes: Int = 4 << 20
    /// Rotated event logs kept (`events.1.jsonl` ... `events.N.jsonl`).
    public var eventLogKeptFiles: Int = 4
    /// How long command outcomes are kept for the programs that wait on them.
    public var outcomeRetentionSeconds: Double = 600
    /// Background transfers that move bytes at the same time.
    public var maximumConcurrentTransfers: Int = 4
    /// First delay before a transfer that failed transiently tries again; it doubles each time.
    public var transferRetryInitialSeconds: Double = 1
    /// The longest delay between two attempts of a transfer.
    public var transferRetryMaximumSeconds: Double = 300
    /// How long a finished (completed, failed, cancelled) transfer's file is kept for the app.
    public var finishedTransferRetentionSeconds: Double = 3600
    /// Background pushes delivered to one app in a rolling hour (Apple asks for no more than two
    /// or three an hour); cut for apps that keep answering `noData` or overrun.
    public var pushBudgetPerHour: Int = 3
    /// App refresh waits for the app's predicted next use (`false`: launched at its earliest
    /// begin date, as before). See `docs/scheduling.md#usage-prediction`.
    public var usagePrediction: Bool = true
    /// A predicted refresh is launched this long before the predicted use.
    public var predictionLeadSeconds: Double = 600
    /// Only a use predicted within this time after a request is ready makes it wait.
    public var predictionHorizonSeconds: Double = 86_400
    /// How likely a use in an hour of the week must be (0–1) to plan a refresh for it.
    public var predictionMinimumConfidence: Double = 0.5
    /// A use counts half as much after this many days.
    public var usageHalfLifeDays: Double = 14
    /// An app not used for this many days is refreshed at most once a day.
    public var staleAfterDays: Double = 7
    /// The CPU monitor: a refresh, push, transfer-event or finishing launch that averages more
    /// than this percent of one core over ``cpuLimitWindowSeconds`` is expired (reason
    /// `cpuLimit`); 0 turns it off. Derived from iOS's background CPU limit (80 % over 60 s).
    public var cpuLimitPercent: Double = 80
    /// The window the CPU monitor averages over; shorter than the refresh budget, so that it can
    /// act on refresh handlers at all. See `docs/configuration.md`.
    public var cpuLimitWindowSeconds: Double = 20
    /// A launch whose process tree holds more than this many MiB is expired (reason
    /// `memoryLimit`); 0 (the default) turns it off.
    public var memoryLimitMiB: Int = 0
    /// Account each launch in a cgroup v2 of its own where the scheduler can make one (`false`:
    /// always sum `/proc`).
    public var launchCgroups: Bool = true
    /// A VoIP push's app must report an incoming call this soon after delivery, or it is killed
    /// (`voipNotReported`). See `docs/scheduling.md#voip-pushes`.
    public var voipReportSeconds: Double = 5
    /// After this many failures to report in a row, an app's VoIP pushes are dropped until a
    /// person uses it.
    public var voipStrikes: Int = 3
    /// Processing requests of an app a person has not used within this many days wait
    /// (`notRecentlyUsed`); 0 switches the rule off. Off by default: many Linux programs that
    /// deserve maintenance time are never opened by a person. Apple's rule is a week (7).
    /// See `docs/scheduling.md#the-small-rules`.
    public var processingRecentUseDays: Double = 0
    /// How long the scheduler waits for an app's answer to `willBeginDelayedRequest` before a
    /// delayed transfer begins as made (`transferAnswerTimedOut`). See
    /// `docs/scheduling.md#asking-before-a-delayed-transfer-begins`.
    public var delayedRequestAnswerSeconds: Double = 30
    /// `logs/<app>.log` is rotated (to `.1`, `.2`, …) at a launch that finds it this big and no
    /// process of the app running. See `docs/configuration.md`.
    public var appLogMaximumBytes: Int = 10 << 20
    /// How many rotated logs of an app are kept besides the current one.
    public var appLogKeptFiles: Int = 3

    public init() {}

    private enum CodingKeys: String, CodingKey, CaseIterable {
        case appRefreshBudgetSeconds, processingBudgetSeconds, finishingBudgetSeconds, expirationGraceSeconds
        case coalescingWindowSeconds, throttleInitialSeconds, throttleMaximumSeconds
        case maximumPendingAppRefresh, maximumPendingProcessing, idleLoadAverage, lowPowerBatteryPercent
        case conditionsRecheckSeconds, eventLogMaximumBytes, eventLogKeptFiles, outcomeRetentionSeconds
        case maximumConcurrentTransfers, transferRetryInitialSeconds, transferRetryMaximumSeconds
        case finishedTransferRetentionSeconds, pushBudgetPerHour
        case usagePrediction, predictionLeadSeconds, predictionHorizonSeconds, predictionMinimumConfidence
        case usageHalfLifeDays, staleAfterDays
        case maxConcurrentLaunches
        case cpuLimitPercent, cpuLimitWindowSeconds, memoryLimitMiB, launchCgroups
        case voipReportSeconds, voipStrikes
        case processingRecentUseDays
        case delayedRequestAnswerSeconds
        case appLogMaximumBytes, appLogKeptFiles
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func read<T: Decodable>(_ key: CodingKeys, _ value: inout T) throws {
            if let decoded = try container.decodeIfPresent(T.self, forKey: key) { value = decoded }
        }
        try read(.appRefreshBudgetSeconds, &appRefreshBudgetSeconds)
        try read(.processingBudgetSeconds, &processingBudgetSeconds)
        try read(.finishingBudgetSeconds, &finishingBudgetSeconds)
        try read(.expirationGraceSeconds, &expirationGraceSeconds)
        try read(.coalescingWindowSeconds, &coalescingWindowSeconds)
        try read(.throttleInitialSeconds, &throttleInitialSeconds)
        try read(.throttleMaximumSeconds, &throttleMaximumSeconds)
        try read(.maximumPendingAppRefresh, &maximumPendingAppRefresh)
        try read(.maximumPendingProcessing, &maximumPendingProcessing)
        try read(.idleLoadAverage, &idleLoadAverage)
        try read(.lowPowerBatteryPercent, &lowPowerBatteryPercent)
        try read(.conditionsRecheckSeconds, &conditionsRecheckSeconds)
        try read(.eventLogMaximumBytes, &eventLogMaximumBytes)
        try read(.eventLogKeptFiles, &eventLogKeptFiles)
        try read(.outcomeRetentionSeconds, &outcomeRetentionSeconds)
        try read(.maximumConcurrentTransfers, &maximumConcurrentTransfers)
        try read(.transferRetryInitialSeconds, &transferRetryInitialSeconds)
        try read(.transferRetryMaximumSeconds, &transferRetryMaximumSeconds)
        try read(.finishedTransferRetentionSeconds, &finishedTransferRetentionSeconds)
        try read(.pushBudgetPerHour, &pushBudgetPerHour)
        try read(.usagePrediction, &usagePrediction)
        try read(.predictionLeadSeconds, &predictionLeadSeconds)
        try read(.predictionHorizonSeconds, &predictionHorizonSeconds)
        try read(.predictionMinimumConfidence, &predictionMinimumConfidence)
        try read(.usageHalfLifeDays, &usageHalfLifeDays)
        try read(.staleAfterDays, &staleAfterDays)
        try read(.maxConcurrentLaunches, &maxConcurrentLaunches)
        try read(.cpuLimitPercent, &cpuLimitPercent)
        try read(.cpuLimitWindowSeconds, &cpuLimitWindowSeconds)
        try read(.memoryLimitMiB, &memoryLimitMiB)
        try read(.launchCgroups, &launchCgroups)
        try read(.voipReportSeconds, &voipReportSeconds)
        try read(.voipStrikes, &voipStrikes)
        try read(.processingRecentUseDays, &processingRecentUseDays)
        try read(.delayedRequestAnswerSeconds, &delayedRequestAnswerSeconds)
        try read(.appLogMaximumBytes, &appLogMaximumBytes)
        try read(.appLogKeptFiles, &appLogKeptFiles)
    }

    /// The delay before attempt `retries + 1` of a transfer that failed transiently.
    public func transferRetryDelay(retries: Int) -> TimeInterval {
        let doubled = transferRetryInitialSeconds * pow(2, Double(min(max(retries - 1, 0), 30)))
        return min(doubled, transferRetryMaximumSeconds)
    }

    /// The runtime budget for a kind of task.
    public func budget(for kind: TaskKind) -> TimeInterval {
        switch kind {
        case .appRefresh, .urlSession, .remoteNotification: return appRefreshBudgetSeconds
        case .processing: return processingBudgetSeconds
        case .finishing: return finishingBudgetSeconds
        }
    }

    /// The throttle delay after `level` overruns in a row (level 1 is the first).
    public func throttleDelay(level: Int) -> TimeInterval {
        guard level > 0 else { return 0 }
        let doubled = throttleInitialSeconds * pow(2, Double(min(level - 1, 40)))
        return min(doubled, throttleMaximumSeconds)
    }

    /// The settings file's path in a config directory.
    public static func path(inConfig directory: String) -> String { "\(directory)/settings.json" }

    /// Reads `<config>/settings.json`; a missing file gives the defaults. A file others could
    /// have written (``ConfigTrust``) is a bad settings file.
    public static func load(configDirectory: String) throws(SettingsError) -> SchedulerSettings {
        let path = path(inConfig: configDirectory)
        guard StateFiles.exists(path) else { return SchedulerSettings() }
        let settings: SchedulerSettings
        do {
            let data = try StateFiles.read(path, maximumSize: 1 << 20, followingLinks: true, vetting: ConfigTrust.vetFile(path))
            if let object = JSONValue(parsing: data)?.object {
                let known = Set(CodingKeys.allCases.map(\.rawValue))
                if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                    throw SettingsError(path: path, reason: "unknown key '\(unknown)'")
                }
            }
            settings = try JSONFormat.decode(SchedulerSettings.self, from: data)
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError(path: path, reason: "\(error)")
        }
        try settings.validate(path: path)
        return settings
    }

    private func validate(path: String) throws(SettingsError) {
        // Every number has an upper bound too: a budget of 1e300 s would overflow every deadline
        // and timer derived from it (see docs/configuration.md for the table).
        let day = 86_400.0, month = 30 * day, year = 365 * day
        let positive: [(String, Double, Double)] = [
            ("appRefreshBudgetSeconds", appRefreshBudgetSeconds, day), ("processingBudgetSeconds", processingBudgetSeconds, day),
            ("finishingBudgetSeconds", finishingBudgetSeconds, day), ("throttleInitialSeconds", throttleInitialSeconds, month),
            ("throttleMaximumSeconds", throttleMaximumSeconds, month), ("conditionsRecheckSeconds", conditionsRecheckSeconds, day),
            ("idleLoadAverage", idleLoadAverage, 100_000), ("outcomeRetentionSeconds", outcomeRetentionSeconds, month),
            ("transferRetryInitialSeconds", transferRetryInitialSeconds, day),
            ("transferRetryMaximumSeconds", transferRetryMaximumSeconds, month),
            ("predictionHorizonSeconds", predictionHorizonSeconds, 7 * day), ("usageHalfLifeDays", usageHalfLifeDays, 365),
            ("staleAfterDays", staleAfterDays, 365), ("predictionMinimumConfidence", predictionMinimumConfidence, 1),
            ("cpuLimitWindowSeconds", cpuLimitWindowSeconds, 3600),
            ("voipReportSeconds", voipReportSeconds, 300),
            ("delayedRequestAnswerSeconds", delayedRequestAnswerSeconds, 3600),
        ]
        for (name, value, maximum) in positive {
            guard value > 0 && value.isFinite else {
                throw SettingsError(path: path, reason: "\(name) must be a positive number of seconds, not \(value)")
            }
            guard value <= maximum else { throw SettingsError(path: path, reason: "\(name) must be at most \(SafeNumber.secondsText(maximum)), not \(value)") }
        }
        let zeroOrMore: [(String, Double, Double)] = [
            ("expirationGraceSeconds", expirationGraceSeconds, 3600), ("coalescingWindowSeconds", coalescingWindowSeconds, day),
            ("finishedTransferRetentionSeconds", finishedTransferRetentionSeconds, year),
            ("predictionLeadSeconds", predictionLeadSeconds, day),
            // Percent of one core: a tree may use several cores (up to 1024 of them).
            ("cpuLimitPercent", cpuLimitPercent, 102_400),
            // Days, not seconds: a use is forgotten after a year (UsageHistory.maximumAge).
            ("processingRecentUseDays", processingRecentUseDays, 365),
        ]
        for (name, value, maximum) in zeroOrMore {
            guard value >= 0 && value.isFinite else { throw SettingsError(path: path, reason: "\(name) must be zero or more, not \(value)") }
            guard value <= maximum else { throw SettingsError(path: path, reason: "\(name) must be at most \(SafeNumber.secondsText(maximum)), not \(value)") }
        }
        let counts: [(String, Int, ClosedRange<Int>)] = [
            ("maximumPendingAppRefresh", maximumPendingAppRefresh, 1...1000), ("maximumPendingProcessing", maximumPendingProcessing, 1...1000),
            ("eventLogMaximumBytes", eventLogMaximumBytes, 4096...(1 << 40)), ("eventLogKeptFiles", eventLogKeptFiles, 1...1000),
            ("maximumConcurrentTransfers", maximumConcurrentTransfers, 1...1024), ("lowPowerBatteryPercent", lowPowerBatteryPercent, 0...100),
            ("maxConcurrentLaunches", maxConcurrentLaunches, 1...1024),
            ("pushBudgetPerHour", pushBudgetPerHour, 1...3600), ("memoryLimitMiB", memoryLimitMiB, 0...(1 << 24)),
            ("voipStrikes", voipStrikes, 1...100),
            ("appLogMaximumBytes", appLogMaximumBytes, 4096...(1 << 40)), ("appLogKeptFiles", appLogKeptFiles, 1...1000),
        ]
        for (name, value, range) in counts where !range.contains(value) {
            throw SettingsError(path: path, reason: "\(name) must be from \(range.lowerBound) to \(range.upperBound), not \(value)")
        }
    }
}

/// A settings file that cannot be used.
public struct SettingsError: Error, Equatable, Sendable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String { "\(path): \(reason)" }
}
