import FoundationEssentials

/// Every app's runs and throttled stretches over the last hours, built from the event log one
/// event at a time: the timeline's model.
///
/// An event costs O(1) (amortized): a dictionary lookup for the run it ends, an append for a run
/// it starts; the oldest runs are dropped as new ones come, by age (``retention`` behind the
/// newest event) and by count (``maximumRunsPerApp``), so memory stays bounded however long the
/// dashboard stays open. Nothing is rebuilt when an event arrives.
public struct RunHistory: Sendable {
    /// One app's runs and throttles, oldest first.
    public struct Lane: Sendable {
        public let app: Identifier
        /// Runs in the order their launches were logged; `head` runs at the front are dropped.
        fileprivate var storage: [HistoryRun] = []
        fileprivate var head = 0
        /// The sequence number of `storage[0]`, so an open run keeps its number when the front is compacted.
        fileprivate var base = 0
        public fileprivate(set) var throttles: [ThrottleStretch] = []

        init(app: Identifier) { self.app = app }

        /// The runs kept, in the order their launches were logged.
        public var runs: ArraySlice<HistoryRun> { storage[head...] }
    }

    /// How long behind the newest event runs are kept (the widest zoom, with room to scroll).
    public let retention: TimeInterval
    public let maximumRunsPerApp: Int
    /// Throttle stretches kept per app.
    public static let maximumThrottlesPerApp = 64
    /// The release of a throttle of level N, as the scheduler's settings give it.
    private let throttleDelay: @Sendable (Int) -> TimeInterval
    /// The wall clock: event times are input (a clock stepped back, a garbage line dated 9999),
    /// and one far in the future must not age every run out of the window.
    private let clock: @Sendable () -> Date
    /// How far ahead of the wall clock an event may be dated and still count as the newest
    /// (another host's clock, a small step back).
    public static let futureTolerance: TimeInterval = 3600

    public private(set) var lanes: [Identifier: Lane] = [:]
    /// The open run of each task key: its app's lane and its sequence number there.
    private var open: [TaskKey: Int] = [:]
    /// The times of the oldest and newest events applied (however old the runs kept), leaving out
    /// those dated more than ``futureTolerance`` ahead of the clock and, for the oldest, those
    /// more than ``retention`` before the newest when they came.
    public private(set) var oldestEvent: Date?
    public private(set) var newestEvent: Date?
    /// Events applied, for the benchmark and tests.
    public private(set) var appliedCount = 0

    /// - Parameter throttleDelay: the delay of a throttle of each level (the scheduler's settings'
    ///   `throttleDelay(level:)`); with the default, throttles are drawn as instants.
    /// - Parameter clock: the wall clock (injected by tests).
    public init(retention: TimeInterval = 26 * 3600, maximumRunsPerApp: Int = 4096,
                throttleDelay: @escaping @Sendable (Int) -> TimeInterval = { _ in 0 },
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.retention = retention
        self.maximumRunsPerApp = max(1, maximumRunsPerApp)
        self.throttleDelay = throttleDelay
        self.clock = clock
    }

    /// The same history with nothing applied yet: its settings, no runs.
    public func emptied() -> RunHistory {
        RunHistory(retention: retention, maximumRunsPerApp: maximumRunsPerApp, throttleDelay: throttleDelay, clock: clock)
    }

    /// The event types that change the history; others are skipped (without being decoded, by
    /// readers that can look at the raw line first).
    public static let kinds: Set<Event.Kind> = [
        .launched, .pushDelivered, .launchFailed, .adopted, .interrupted, .completed, .exited, .expired, .killed, .throttled,
    ]

    /// The runs of `app`'s lane, oldest launch first (empty when it has none).
    public func runs(of app: Identifier) -> ArraySlice<HistoryRun> { lanes[app]?.runs ?? [] }

    /// The open run of a task, if one is open.
    public func openRun(_ key: TaskKey) -> HistoryRun? {
        guard let sequence = open[key], let lane = lanes[key.app] else { return nil }
        return lane.storage[sequence - lane.base]
    }

    /// Applies one event, in log order. Events out of time order are taken as they come: an end
    /// logged before its launch's time ends the run at its launch.
    public mutating func apply(_ event: Event) {
        guard Self.kinds.contains(event.type), let app = event.app else { return }
        appliedCount += 1
        let time = event.time
        if time <= clock().addingTimeInterval(Self.futureTolerance) {
            if newestEvent.map({ time > $0 }) ?? true { newestEvent = time }
            let ancient = newestEvent.map { time < $0.addingTimeInterval(-retention) } ?? false
            if !ancient, oldestEvent.map({ time < $0 }) ?? true { oldestEvent = time }
        }
        if event.type == .throttled {
            throttle(app, event: event)
        } else if let identifier = event.identifier {
            run(TaskKey(app: app, identifier: identifier), event: event)
        }
        prune(app)
        // Apps that log nothing more age out too: every so often, every lane (O(1) amortized).
        if appliedCount % Self.sweepInterval == 0 {
            for other in lanes.keys where other != app { prune(other) }
        }
    }

    /// Events between two sweeps of every lane.
    public static let sweepInterval = 1024

    private mutating func run(_ key: TaskKey, event: Event) {
        let time = event.time
        switch event.type {
        case .launched, .pushDelivered:
            // A launch of an identifier that is still open: the old run's end was never logged.
            if open[key] != nil { close(key, at: time, as: .lost) }
            append(HistoryRun(app: key.app, identifier: key.identifier, origin: .init(reason: event.reason, kind: event.kind), start: time))
        case .launchFailed:
            append(HistoryRun(app: key.app, identifier: key.identifier, origin: .init(reason: event.reason, kind: event.kind),
                              start: time, end: time, outcome: .failed), isOpen: false)
        case .adopted:
            if open[key] == nil {
                append(HistoryRun(app: key.app, identifier: key.identifier, origin: .init(reason: nil, kind: event.kind),
                                  start: time, startLogged: false, adopted: true))
            }
            update(key, at: time) { $0.adopted = true }
        case .expired:
            if open[key] == nil { appendUnlogged(key, event: event) }
            update(key, at: time) { $0.expired = true }
        case .completed:
            let expired = openRun(key)?.expired ?? false
            let failed = event.reason == "failure" || event.reason == FetchResultName.failed
            close(key, at: time, as: expired ? .expired : failed ? .failed : .completed, event: event)
            // A task completed within its budget lifts the app's throttle (the scheduler resets it).
            if !expired, event.kind != .finishing { liftThrottle(of: key.app, at: time) }
        case .exited:
            close(key, at: time, as: (openRun(key)?.expired ?? false) ? .expired : .failed, event: event)
        case .killed:
            close(key, at: time, as: .killed, event: event)
        case .interrupted:
            close(key, at: time, as: .lost, event: event)
        default:
            break
        }
    }

    /// A push's answer that counts as a failure (`FetchResult.failed`), named here so the model
    /// needs no scheduler types.
    private enum FetchResultName {
        static let failed = "failed"
    }

    private mutating func throttle(_ app: Identifier, event: Event) {
        // `pushBudget` throttles cut a push budget; they do not hold launches back.
        guard let reason = event.reason, reason.hasPrefix("level "), let level = Int(reason.dropFirst(6)), level > 0 else { return }
        liftThrottle(of: app, at: event.time)
        let delay = throttleDelay(level)
        let end = event.time.addingTimeInterval(delay.isFinite ? max(0, delay) : 0)
        lanes[app, default: Lane(app: app)].throttles.append(ThrottleStretch(start: event.time, end: end, level: level))
        if lanes[app]!.throttles.count > Self.maximumThrottlesPerApp { lanes[app]!.throttles.removeFirst() }
    }

    private mutating func liftThrottle(of app: Identifier, at time: Date) {
        guard let last = lanes[app]?.throttles.last, last.end > time else { return }
        lanes[app]!.throttles[lanes[app]!.throttles.count - 1].end = max(last.start, time)
    }

    /// A run whose launch is not in the history: it began no later than the oldest event read,
    /// and no earlier than the window (an ancient-dated line must not make it days long).
    private mutating func appendUnlogged(_ key: TaskKey, event: Event) {
        let window = min(event.time, cutoff)
        let start = min(max(oldestEvent ?? event.time, window), event.time)
        append(HistoryRun(app: key.app, identifier: key.identifier, origin: .init(reason: nil, kind: event.kind),
                          start: start, startLogged: false))
    }

    private mutating func append(_ run: HistoryRun, isOpen: Bool = true) {
        var lane = lanes.removeValue(forKey: run.app) ?? Lane(app: run.app)
        if isOpen { open[run.key] = lane.base + lane.storage.count }
        lane.storage.append(run)
        lanes[run.app] = lane
    }

    private mutating func update(_ key: TaskKey, at time: Date, _ change: (inout HistoryRun) -> Void) {
        guard let sequence = open[key] else { return }
        let index = sequence - lanes[key.app]!.base
        change(&lanes[key.app]!.storage[index])
        lanes[key.app]!.storage[index].lastSeen = max(lanes[key.app]!.storage[index].lastSeen, time)
    }

    /// Ends the open run of `key`; an end with no open run (its launch is older than the history)
    /// still counts, as a run from the oldest event read.
    private mutating func close(_ key: TaskKey, at time: Date, as outcome: HistoryRun.Outcome, event: Event? = nil) {
        if open[key] == nil {
            guard let event else { return }
            appendUnlogged(key, event: event)
        }
        update(key, at: time) { run in
            run.end = max(run.start, time)
            run.outcome = outcome
        }
        open[key] = nil
    }

    /// ``retention`` before the newest event, or before now when the newest is later than now
    /// (the clock was stepped back).
    private var cutoff: Date {
        guard let newestEvent else { return .distantPast }
        return min(newestEvent, clock()).addingTimeInterval(-retention)
    }

    /// Drops the app's oldest runs: those that ended more than ``retention`` before the newest
    /// event, and any beyond ``maximumRunsPerApp``. An open run is not dropped for its age (its
    /// task may run still; runs after it wait behind it, within the count). Compacts the storage
    /// once half of it is dropped, so dropping stays O(1) amortized.
    private mutating func prune(_ app: Identifier) {
        guard var lane = lanes.removeValue(forKey: app) else { return }
        let cutoff = cutoff
        while lane.head < lane.storage.count {
            let first = lane.storage[lane.head]
            let tooMany = lane.storage.count - lane.head > maximumRunsPerApp
            let tooOld = first.end.map { $0 < cutoff } ?? false
            guard tooMany || tooOld else { break }
            if first.isOpen, open[first.key] == lane.base + lane.head { open[first.key] = nil }
            lane.head += 1
        }
        if lane.head >= 64, lane.head * 2 >= lane.storage.count {
            lane.storage.removeFirst(lane.head)
            lane.base += lane.head
            lane.head = 0
        }
        while let first = lane.throttles.first, first.end < cutoff { lane.throttles.removeFirst() }
        // An app with nothing left in the window has no lane.
        if lane.storage.count > lane.head || !lane.throttles.isEmpty { lanes[app] = lane }
    }
}
