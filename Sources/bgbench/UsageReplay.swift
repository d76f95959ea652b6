import Foundation
import SchedulerCore
import TaskState

/// How each app's one refresh request is scheduled in a row of `bgbench prediction`.
enum RefreshPolicy: String, CaseIterable, Sendable {
    /// Today's behaviour (`usagePrediction: false`): the handler resubmits with
    /// `earliestBeginDate` = now + the interval the app asks for, and the request runs then.
    case earliest
    /// A systemd-style timer: one refresh per app every hour on the hour, whatever the user does.
    case hourly
    /// Like `earliest`, with `usagePrediction: true` (default settings) and every open fed to the
    /// scheduler as an `appUsed` command when it happens.
    case prediction
}

/// Opens, opens that found fresh content, and launches, over some app-days.
struct FreshnessTally: Sendable {
    var opens = 0
    var fresh = 0
    var launches = 0
    var appDays = 0.0

    /// The share of opens that had a refresh of the app within the freshness window before them.
    var freshness: Double { opens == 0 ? .nan : Double(fresh) / Double(opens) }
    /// Launches per app per day.
    var cost: Double { appDays == 0 ? .nan : Double(launches) / appDays }

    static func + (lhs: FreshnessTally, rhs: FreshnessTally) -> FreshnessTally {
        FreshnessTally(opens: lhs.opens + rhs.opens, fresh: lhs.fresh + rhs.fresh,
                       launches: lhs.launches + rhs.launches, appDays: lhs.appDays + rhs.appDays)
    }
}

/// One policy over one trace, through the real `SchedulerState` on a simulated clock: the clock
/// jumps to the next of {the next open, the next handler completion, `nextWake(after:)`}; what is
/// due there is launched (`effectsOfTime`, `recordLaunch`), and each launch's handler completes
/// ``handlerSeconds`` later (a `complete` command, the process exits) and resubmits.
struct UsageReplay {
    /// An open is fresh when a refresh of its app completed this long before it, or less.
    static let freshnessWindow: TimeInterval = 1800
    /// How long the simulated refresh handler runs before it completes.
    static let handlerSeconds: TimeInterval = 5
    static let refreshIdentifier = try! Identifier(validating: "refresh")

    let trace: UsageTrace
    let policy: RefreshPolicy
    /// The app's own resubmit interval (policies `earliest` and `prediction`).
    let interval: TimeInterval

    private var state: SchedulerState
    private var commands = 0
    private var pid: Int32 = 1000
    /// When each app's refreshes completed, oldest first.
    private var refreshed: [Identifier: [Date]] = [:]
    /// Commands the core refused and effects a refresh that completes in time never causes: a
    /// replay with any of them does not measure the policy (the first is kept for the report).
    private(set) var anomalies = 0
    private(set) var firstAnomaly: String?

    init(trace: UsageTrace, policy: RefreshPolicy, interval: TimeInterval) {
        self.trace = trace
        self.policy = policy
        self.interval = interval
        var settings = SchedulerSettings()
        settings.usagePrediction = policy == .prediction
        let manifests = trace.apps.map {
            AppManifest(id: $0, executable: "/bin/true", permittedIdentifiers: [Self.refreshIdentifier], backgroundModes: [.fetch])
        }
        state = SchedulerState(settings: settings, catalog: ManifestCatalog(manifests: Dictionary(uniqueKeysWithValues: manifests.map { ($0.id, $0) })),
                               conditions: ConditionsRecord(probed: Conditions(), probedAt: trace.start))
        state.timeZone = .utc
    }

    /// Replays the whole trace.
    mutating func run() {
        var now = trace.start
        for app in trace.apps { submit(app, at: now, first: true) }
        var completions: [(date: Date, app: Identifier, pid: Int32)] = []
        var nextCompletion = 0
        var nextOpen = 0
        // Each turn handles the instant `now` (the first: the requests submitted at the start), then
        // moves the clock on.
        while true {
            while nextCompletion < completions.count, completions[nextCompletion].date <= now {
                let done = completions[nextCompletion]
                nextCompletion += 1
                send(.complete(app: done.app, identifier: Self.refreshIdentifier, success: true), at: now)
                state.processExited(pid: done.pid, status: "exited 0", now: now)
                refreshed[done.app, default: []].append(now)
                submit(done.app, at: now, first: false)
            }
            while nextOpen < trace.opens.count, trace.opens[nextOpen].date <= now {
                let open = trace.opens[nextOpen]
                nextOpen += 1
                if policy == .prediction { send(.appUsed(app: open.app, uses: [open.date]), at: now) }
            }
            for effect in state.effectsOfTime(at: now) {
                guard case .launch(let plan) = effect else {
                    note("unexpected effect \(effect) at \(JSONFormat.string(from: now))")
                    continue
                }
                pid += 1
                state.recordLaunch(plan, pid: pid, processGroup: pid, processStartTicks: 1, now: now)
                completions.append((now.addingTimeInterval(Self.handlerSeconds), plan.app, pid))
            }
            // The events are the daemon's log; nothing here reads them.
            _ = state.takeChanges()
            var next = trace.end
            if nextOpen < trace.opens.count { next = min(next, trace.opens[nextOpen].date) }
            if nextCompletion < completions.count { next = min(next, completions[nextCompletion].date) }
            // A wake that is not after now would stall the clock; a second later is the next look.
            if let wake = state.nextWake(after: now) { next = min(next, max(wake, now.addingTimeInterval(1))) }
            guard next < trace.end else { break }
            now = max(now, next)
        }
    }

    /// Freshness and cost over `from..<to`, of every app or of `app` alone.
    func tally(from: Date, to: Date, app: Identifier? = nil) -> FreshnessTally {
        let apps = app.map { [$0] } ?? trace.apps
        var tally = FreshnessTally(appDays: Double(apps.count) * to.timeIntervalSince(from) / 86_400)
        for open in trace.opens where open.date >= from && open.date < to && (app == nil || open.app == app) {
            tally.opens += 1
            let refreshes = refreshed[open.app] ?? []
            // The last refresh at or before the open.
            let index = refreshes.partitionPoint { $0 > open.date } - 1
            if index >= 0, open.date.timeIntervalSince(refreshes[index]) <= Self.freshnessWindow { tally.fresh += 1 }
        }
        tally.launches = apps.reduce(0) { sum, app in sum + (refreshed[app] ?? []).count(where: { $0 >= from && $0 < to }) }
        return tally
    }

    private mutating func submit(_ app: Identifier, at now: Date, first: Bool) {
        let earliest: Date?
        switch policy {
        case .earliest, .prediction:
            earliest = first ? nil : now.addingTimeInterval(interval)
        case .hourly:
            // On the hour: the trace starts at midnight UTC, and UTC hours are whole hours since 1970.
            let hour = (now.timeIntervalSince1970 / 3600).rounded(.down) * 3600
            earliest = first ? now : Date(timeIntervalSince1970: hour + 3600)
        }
        send(.submit(SubmitRequest(app: app, identifier: Self.refreshIdentifier, kind: .appRefresh, earliestBeginDate: earliest)), at: now)
    }

    private mutating func send(_ action: CommandAction, at now: Date) {
        commands += 1
        let result = state.apply(Command(id: "replay-\(commands)", issuedAt: now, issuerPID: 1, action: action), now: now)
        if let error = result.outcome.error { note("\(error.name): \(error.message)") }
    }

    private mutating func note(_ anomaly: String) {
        anomalies += 1
        if firstAnomaly == nil { firstAnomaly = anomaly }
    }
}

extension Array {
    /// The index of the first element for which `isAfter` holds, in an array where it holds for a
    /// suffix (binary search).
    func partitionPoint(_ isAfter: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if isAfter(self[middle]) { high = middle } else { low = middle + 1 }
        }
        return low
    }
}
