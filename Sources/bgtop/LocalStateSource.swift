import CLinuxSupport
import Dashboard
import DashboardFeed
import FoundationEssentials
import StateFeed
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The local state directory: inotify's reports gathered (``StateChangeSet``) and the files they
/// name read at a bounded rate (``ReloadPacing``) into a ``StateMirror``; commands go to the inbox
/// through ``CommandDispatch``; a pidfd on the scheduler shows its exit at once. The log pager's
/// reads are answered off the loop (``LogReads``) and its log followed with inotify (``LogWatch``).
final class LocalStateSource: DashboardSource {
    private var reader: SnapshotReader
    private let mirror: StateMirror
    private let watch: StateWatch
    private let dispatch: CommandDispatch
    private var current: DashboardSnapshot
    /// `current`'s pending rows, kept current change by change.
    private var pendingRows = LivePendingRows()
    /// Read since `current` was brought up to date: it is, when next asked for.
    private var stale = false
    private var configurationChanged = false
    /// A pidfd on the scheduler shown as up: its exit is a kernel event, so a scheduler that dies
    /// (even by SIGKILL, leaving its files untouched) is shown as down at once.
    private var scheduler: (pid: Int32, descriptor: Int32)?
    /// What inotify reported since the last reload, and when the next reload may happen.
    private var pending = StateChangeSet()
    private var pacing = ReloadPacing(interval: DashboardLoop.reloadInterval)
    private var reports: [CommandDispatch.StatusReport] = []
    private let logReads: LogReads
    private let logWatch: LogWatch
    private var logExcerpts: [LogExcerpt] = []
    private var logChanged = false

    init(reader: SnapshotReader) throws {
        self.reader = reader
        watch = try StateWatch(paths: reader.paths, appsDirectory: reader.appsDirectory)
        dispatch = try CommandDispatch(paths: reader.paths)
        logReads = try LogReads(paths: reader.paths)
        logWatch = LogWatch(paths: reader.paths)
        mirror = StateMirror(paths: reader.paths, history: RunHistory(throttleDelay: reader.throttleDelay), tracksRequestChanges: true)
        current = DashboardSnapshot(now: Date(), stateDirectory: reader.paths.root)
        reader.refresh(&current, pending: &pendingRows, mirror: mirror, configurationChanged: true)
        watchScheduler()
    }

    deinit {
        if let scheduler { Glibc.close(scheduler.descriptor) }
    }

    var descriptors: [(descriptor: Int32, output: Bool)] {
        [(watch.descriptor, false), (dispatch.descriptor, false), (scheduler?.descriptor ?? -1, false),
         (logReads.descriptor, false), (logWatch.descriptor, false)]
    }

    func service(ready: Set<Int>) -> Bool {
        if ready.contains(0) {
            let changes = watch.drain()
            if !changes.isEmpty {
                pending.add(changes, paths: reader.paths, configApps: reader.appsDirectory)
                if !pending.isEmpty { pacing.changed(at: MonotonicClock.now()) }
            }
        }
        if ready.contains(1) { reports += dispatch.take() }
        if ready.contains(3) { logExcerpts += logReads.take().map(\.excerpt) }
        if ready.contains(4), logWatch.drain() { logChanged = true }
        let reload = pacing.isDue(at: MonotonicClock.now())
        if reload {
            if pending.configuration {
                reader.reloadConfiguration()
                configurationChanged = true
            }
            mirror.apply(pending)
            pending = StateChangeSet()
        }
        // A scheduler that exited is shown at once: nothing to read but the lock.
        let rebuild = reload || ready.contains(2)
        if rebuild {
            // Brought up to date when asked for (at once, by the loop, which first lets go of
            // its copy: the rows then change in place rather than being copied whole).
            stale = true
        }
        // Counted from the end of the reload: however long one takes, the next waits a full interval.
        if reload { pacing.reloaded(at: MonotonicClock.now()) }
        return rebuild
    }

    func pollTimeout() -> Int32 { pacing.pollTimeout(at: MonotonicClock.now()) }

    func snapshot(now: Date) -> DashboardSnapshot {
        if stale { refresh() }
        var snapshot = current
        snapshot.now = now
        return snapshot
    }

    func send(_ action: CommandAction, summary: String) { dispatch.send(action, summary: summary) }

    func takeReports() -> [CommandDispatch.StatusReport] {
        defer { reports.removeAll() }
        return reports
    }

    func switchHost() -> DashboardState.Status {
        DashboardState.Status("one state directory: H switches between the machines of bgtop --host", isError: true)
    }

    func readLog(_ request: LogRequest) { logReads.read(request) }

    func followLog(_ app: Identifier?) { logWatch.follow(app) }

    func takeLogNews() -> (excerpts: [LogExcerpt], changed: Bool) {
        defer {
            logExcerpts.removeAll()
            logChanged = false
        }
        return (logExcerpts, logChanged)
    }

    func close() {}

    private func refresh() {
        reader.refresh(&current, pending: &pendingRows, mirror: mirror, configurationChanged: configurationChanged)
        stale = false
        configurationChanged = false
        watchScheduler()
    }

    /// Follows the scheduler pid of the current snapshot with a pidfd.
    private func watchScheduler() {
        guard scheduler?.pid != current.schedulerPID else { return }
        if let scheduler { Glibc.close(scheduler.descriptor) }
        scheduler = nil
        if let pid = current.schedulerPID, pid != getpid() {
            let descriptor = bg_pidfd_open(pid)
            if descriptor >= 0 { scheduler = (pid, descriptor) }
        }
    }
}

/// Seconds on the monotonic clock, for ``ReloadPacing`` and retry timers.
enum MonotonicClock {
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
