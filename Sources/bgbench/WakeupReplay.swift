import Foundation
import SchedulerCore
import TaskState
import TortureCampaign

/// How launches are placed in a row of `bgbench wakeups`.
enum WakeupPolicy: String, CaseIterable, Sendable {
    /// Each request launched at its own date (`coalescingWindowSeconds: 0`): launching per app.
    case perApp = "per-app launching"
    /// systemd's timers with `AccuracySec=`: each elapse postponed to the next point of the minute
    /// grid (shifted by a per-machine perturbation, as `sleep_between` in sd-event does) within the
    /// accuracy, then launched at that date.
    case accuracy = "systemd AccuracySec"
    /// The scheduler's own policy: coalescing across apps and `maxConcurrentLaunches`.
    case coalesced = "coalesced across apps"
}

/// What one policy did over the replayed day.
struct WakeupTally: Sendable {
    /// Times the scheduler's timer fired (`nextWake`), whether or not it launched anything: each
    /// wakes the scheduler, and the machine if it slept.
    var wakeups = 0
    /// Of those, the ones when no launched handler was running.
    var fromIdle = 0
    /// Turns that launched something (a timer's, or a handler's end freeing a launch slot).
    var launchTurns = 0
    var launches = 0
    /// Seconds from each launch's asked-for `earliestBeginDate` to its launch.
    var delays: [Double] = []
    /// The most handlers running at once.
    var mostRunning = 0
}

/// N apps each keeping one app refresh request, replayed through the real `SchedulerState` on a
/// simulated clock. Each app asks for its next refresh a random interval after its handler
/// completes; the handler runs a random few seconds. The draws come from one generator per app,
/// so every policy sees the same apps asking for the same intervals.
struct WakeupReplay {
    static let start = Date(timeIntervalSince1970: 1_795_341_600)

    let policy: WakeupPolicy
    let apps: [Identifier]
    let hours: Double
    let accuracy: TimeInterval
    /// systemd's per-machine shift of the grid, in seconds (drawn from the seed).
    let perturbation: TimeInterval
    private var state: SchedulerState
    private var draws: [Identifier: SplitMix64]
    private var askedFor: [Identifier: Date] = [:]
    private var pid: Int32 = 1000
    private(set) var anomalies: [String] = []

    /// - Parameters:
    ///   - window: `coalescingWindowSeconds` of the coalesced policy.
    ///   - maxConcurrent: `maxConcurrentLaunches` of the coalesced policy.
    init(policy: WakeupPolicy, appCount: Int, hours: Double, seed: UInt64, window: TimeInterval,
         accuracy: TimeInterval, maxConcurrent: Int) {
        self.policy = policy
        self.hours = hours
        self.accuracy = accuracy
        apps = (0..<appCount).map { try! Identifier(validating: "bench.wake\($0)") }
        var root = SplitMix64(seed: seed)
        perturbation = root.unit() * 60
        draws = Dictionary(uniqueKeysWithValues: apps.map { ($0, root.split()) })
        var settings = SchedulerSettings()
        settings.usagePrediction = false
        settings.coalescingWindowSeconds = policy == .coalesced ? window : 0
        settings.maxConcurrentLaunches = policy == .coalesced ? maxConcurrent : 1024
        let manifests = apps.map {
            AppManifest(id: $0, executable: "/bin/true", permittedIdentifiers: [Self.refresh], backgroundModes: [.fetch])
        }
        state = SchedulerState(settings: settings, catalog: ManifestCatalog(manifests: Dictionary(uniqueKeysWithValues: manifests.map { ($0.id, $0) })),
                               conditions: ConditionsRecord(probed: Conditions(), probedAt: Self.start))
        state.timeZone = .utc
    }

    static let refresh = try! Identifier(validating: "refresh")

    /// Replays the day; the clock jumps to the next handler completion or `nextWake(after:)`.
    mutating func run() -> WakeupTally {
        var tally = WakeupTally()
        let end = Self.start.addingTimeInterval(hours * 3600)
        for app in apps { ask(app, after: Self.start) }
        var running: [(date: Date, app: Identifier, pid: Int32)] = []
        var now = Self.start
        var timerFired = false
        while now < end {
            // A handler that ends at this instant kept the machine awake until now.
            let wasIdle = running.isEmpty
            if timerFired {
                tally.wakeups += 1
                if wasIdle { tally.fromIdle += 1 }
            }
            while let first = running.first, first.date <= now {
                running.removeFirst()
                send(.complete(app: first.app, identifier: Self.refresh, success: true), at: now)
                state.processExited(pid: first.pid, status: "exited 0", now: now)
                ask(first.app, after: now)
            }
            var launched = false
            for effect in state.effectsOfTime(at: now) {
                guard case .launch(let plan) = effect else { continue }
                pid += 1
                state.recordLaunch(plan, pid: pid, processGroup: pid, processStartTicks: 1, now: now)
                launched = true
                tally.launches += 1
                if let asked = askedFor[plan.app] { tally.delays.append(now.timeIntervalSince(asked)) }
                let done = now.addingTimeInterval(2 + 8 * draws[plan.app]!.unit())
                running.insert((done, plan.app, pid), at: running.firstIndex { $0.date > done } ?? running.count)
            }
            if launched { tally.launchTurns += 1 }
            tally.mostRunning = max(tally.mostRunning, running.count)
            _ = state.takeChanges()
            var next = end
            if let first = running.first { next = min(next, first.date) }
            // A wake that is not after now would stall the clock.
            let wake = state.nextWake(after: now).map { max($0, now.addingTimeInterval(0.001)) }
            // A handler ending at the same instant wakes the scheduler anyway (its exit).
            timerFired = wake.map { $0 < next } ?? false
            if let wake { next = min(next, wake) }
            now = max(now, next)
        }
        return tally
    }

    /// The app's handler finished at `now`: it asks for its next refresh 15 min to 2 h later
    /// (the first one within the first 2 h).
    private mutating func ask(_ app: Identifier, after now: Date) {
        let minutes = now == Self.start ? 120 * draws[app]!.unit() : 15 + 105 * draws[app]!.unit()
        let asked = now.addingTimeInterval(minutes * 60)
        askedFor[app] = asked
        let earliest = policy == .accuracy ? systemdElapse(asked) : asked
        send(.submit(SubmitRequest(app: app, identifier: Self.refresh, kind: .appRefresh, earliestBeginDate: earliest)), at: now)
    }

    /// Where systemd puts an elapse due at `date` with `AccuracySec=`: sd-event's `sleep_between`
    /// takes the latest point at or before `date + accuracy` of a one-minute grid shifted by the
    /// machine's perturbation, else of a 10 s grid, else of a 1 s grid, else `date + accuracy`.
    func systemdElapse(_ date: Date) -> Date {
        let latest = date.timeIntervalSince1970 + accuracy
        for step in [60.0, 10, 1] {
            let shift = perturbation.truncatingRemainder(dividingBy: step)
            let point = ((latest - shift) / step).rounded(.down) * step + shift
            if point >= date.timeIntervalSince1970 { return Date(timeIntervalSince1970: point) }
        }
        return Date(timeIntervalSince1970: latest)
    }

    private mutating func send(_ action: CommandAction, at now: Date) {
        let command = Command(id: Command.newID(at: now), issuedAt: now, issuerPID: 1, action: action)
        let result = state.apply(command, now: now)
        if let error = result.outcome.error, anomalies.count < 3 { anomalies.append("\(error.name): \(error.message)") }
    }
}
