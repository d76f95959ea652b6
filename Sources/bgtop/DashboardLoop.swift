import CLinuxSupport
import CursesTerminal
import Dashboard
import Foundation
import TaskState

/// The dashboard's event loop: one `poll` over the terminal, inotify on the state directory, a
/// timer that ticks only while something on screen counts down, signals, and command results;
/// changed files are read at a bounded rate (``ReloadPacing``).
/// Everything else is the pure ``DashboardView`` and ``DashboardState``.
final class DashboardLoop {
    /// What the loop sleeps on.
    private enum Source: Hashable {
        case terminal, stateChanges, tick, signals, commandResults, schedulerExit, logAnswers, logChanges
    }

    private let terminal: CursesTerminal
    private var reader: SnapshotReader
    private let mirror: StateMirror
    private let watch: StateWatch
    private let dispatch: CommandDispatch
    /// The log pager's reads and the inotify on its log (only while it is open).
    private let logReads: LogReads
    private let logWatch: LogWatch
    private var themes: ThemeRotation
    private let glyphs: Glyphs
    private var state: DashboardState
    private var snapshot: DashboardSnapshot
    private let signalDescriptor: Int32
    private let timerDescriptor: Int32
    /// A pidfd on the scheduler shown as up: its exit is a kernel event, so a scheduler that dies
    /// (even by SIGKILL, leaving its files untouched) is shown as down at once.
    private var scheduler: (pid: Int32, descriptor: Int32)?
    /// What inotify reported since the last reload, and when the next reload may happen.
    private var pending = StateChangeSet()
    private var pacing = ReloadPacing(interval: DashboardLoop.reloadInterval)
    /// Told each snapshot read from changed state (`--demo` reacts to completed transfers).
    private let stateRead: ((DashboardSnapshot) -> Void)?

    /// The shortest time between two reloads of changed files while changes keep coming: short
    /// enough that the screen follows the scheduler, long enough that a stream of commits does
    /// not keep the dashboard busy.
    static let reloadInterval = 0.2

    init(terminal: CursesTerminal, reader: SnapshotReader, watch: StateWatch, dispatch: CommandDispatch,
         themes: ThemeRotation, readOnly: Bool, signals: sigset_t, initialStatus: String? = nil,
         stateRead: ((DashboardSnapshot) -> Void)? = nil) throws {
        self.terminal = terminal
        self.stateRead = stateRead
        self.reader = reader
        self.watch = watch
        self.dispatch = dispatch
        logReads = try LogReads(paths: reader.paths)
        logWatch = LogWatch(paths: reader.paths)
        self.themes = themes
        glyphs = terminal.unicode ? .unicode : .ascii
        state = DashboardState(readOnly: readOnly, themeName: themes.current.name)
        if let initialStatus { state.status = DashboardState.Status(initialStatus, isError: true) }
        mirror = StateMirror(paths: reader.paths, history: RunHistory(throttleDelay: reader.throttleDelay))
        snapshot = reader.build(from: mirror.snapshot, events: mirror.events, history: mirror.history)
        var mask = signals
        signalDescriptor = bg_signalfd(&mask)
        timerDescriptor = bg_timerfd_create()
        guard signalDescriptor >= 0, timerDescriptor >= 0 else {
            throw StateError.system(operation: "cannot set up signals and timers for", path: "bgtop", errno: errno)
        }
    }

    deinit {
        close(signalDescriptor)
        close(timerDescriptor)
        if let scheduler { close(scheduler.descriptor) }
    }

    /// Follows the scheduler pid of the current snapshot with a pidfd.
    private func watchScheduler() {
        guard scheduler?.pid != snapshot.schedulerPID else { return }
        if let scheduler { close(scheduler.descriptor) }
        scheduler = nil
        if let pid = snapshot.schedulerPID, pid != getpid() {
            let descriptor = bg_pidfd_open(pid)
            if descriptor >= 0 { scheduler = (pid, descriptor) }
        }
    }

    /// Runs until `q` or a terminating signal. Returns the signal that ended it, if any.
    ///
    /// Keys come first: they are handled and drawn from the state in memory before anything is
    /// read from disk. inotify's reports are only gathered (``StateChangeSet``); the files they
    /// name are read when ``ReloadPacing`` says so, at most once per ``reloadInterval``, so a
    /// stream of commits costs one reload and one redraw per interval. `poll` gets a timeout only
    /// while a change waits to be read.
    func run() -> Int32? {
        watchScheduler()
        draw()
        while true {
            var poll = KernelPoll<Source>()
            poll.watch(.terminal, terminal.inputDescriptor)
            poll.watch(.stateChanges, watch.descriptor)
            poll.watch(.tick, timerDescriptor)
            poll.watch(.signals, signalDescriptor)
            poll.watch(.commandResults, dispatch.descriptor)
            poll.watch(.schedulerExit, scheduler?.descriptor ?? -1)
            poll.watch(.logAnswers, logReads.descriptor)
            poll.watch(.logChanges, logWatch.descriptor)
            armTimer()
            guard let ready = poll.wait(milliseconds: pacing.pollTimeout(at: Self.monotonicNow())) else { return nil }
            if ready.contains(.signals) {
                while true {
                    let signal = bg_signalfd_read(signalDescriptor)
                    if signal <= 0 { break }
                    switch signal {
                    case SIGWINCH: _ = terminal.refreshSize()
                    case SIGINT, SIGTERM, SIGHUP: return signal
                    default: continue
                    }
                }
            }
            if ready.contains(.terminal) {
                // Drawn even without a key: ncurses may have taken a resize or a Ctrl-L.
                for key in terminal.readKeys() where handle(key) == false { return nil }
                draw()
            }
            var redraw = ready.contains(.signals)
            if ready.contains(.stateChanges) {
                let changes = watch.drain()
                if !changes.isEmpty {
                    pending.add(changes, paths: reader.paths, configApps: reader.appsDirectory)
                    if !pending.isEmpty { pacing.changed(at: Self.monotonicNow()) }
                }
            }
            if ready.contains(.tick) {
                // A tick only moves the clock: the redraw below recomputes the countdowns from
                // the state in memory; nothing is read.
                bg_timerfd_drain(timerDescriptor)
                redraw = true
            }
            // The pager's log: answers to its reads, and the log changing while it is open.
            for excerpt in ready.contains(.logAnswers) ? logReads.take() : [] {
                _ = perform(state.receiveLog(excerpt))
                redraw = true
            }
            if ready.contains(.logChanges), logWatch.drain() {
                _ = perform(state.logFileChanged())
                redraw = true
            }
            for result in ready.contains(.commandResults) ? dispatch.take() : [] {
                state.status = DashboardState.Status(result.text, isError: result.isError)
                redraw = true
            }
            let reload = pacing.isDue(at: Self.monotonicNow())
            if reload {
                if pending.configuration { reader.reloadConfiguration() }
                mirror.apply(pending)
                pending = StateChangeSet()
            }
            // A scheduler that exited is shown at once: nothing to read but the lock.
            if reload || ready.contains(.schedulerExit) {
                snapshot = reader.build(from: mirror.snapshot, events: mirror.events, history: mirror.history)
                watchScheduler()
                redraw = true
                stateRead?(snapshot)
            }
            if redraw { draw() }
            // Counted from the end of the reload: however long one takes, the next waits a full interval.
            if reload { pacing.reloaded(at: Self.monotonicNow()) }
        }
    }

    /// Seconds on the monotonic clock, for ``ReloadPacing``.
    private static func monotonicNow() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Applies a key; returns false to quit.
    private func handle(_ key: Key) -> Bool {
        let layout = DashboardLayout(size: terminal.size, snapshot: snapshot, state: state)
        snapshot.now = Date()
        return perform(state.handle(key, snapshot: snapshot, layout: layout))
    }

    /// Carries out what the dashboard asked for; returns false to quit.
    private func perform(_ effects: [DashboardEffect]) -> Bool {
        // Watched before the first read is sent, so no write between the two goes unseen.
        logWatch.follow(state.followedLog)
        for effect in effects {
            switch effect {
            case .quit:
                return false
            case .nextTheme:
                themes.advance()
                state.themeName = themes.current.name
                state.status = DashboardState.Status("theme: \(themes.current.name)")
            case .send(let action, let summary):
                state.status = DashboardState.Status("\(summary)…")
                dispatch.send(action, summary: summary)
            case .readLog(let request):
                logReads.read(request)
            }
        }
        return true
    }

    private func draw() {
        snapshot.now = Date()
        let grid = DashboardView.render(snapshot, state: state, size: terminal.size, theme: themes.current, glyphs: glyphs)
        terminal.draw(grid)
    }

    /// One tick a second while a countdown is on screen; otherwise only at the next minute, for
    /// the header clock, or sooner while the timeline follows now and moves by a cell. Nothing
    /// else wakes the dashboard but the kernel.
    private func armTimer() {
        let now = Date().timeIntervalSince1970
        var next = snapshot.hasCountdown ? floor(now) + 1 : floor(now / 60) * 60 + 60
        if case .timeline(let position) = state.overlay, position.offset == 0 {
            let cell = max(1, position.cellDuration(screenWidth: terminal.size.width))
            next = min(next, (floor(now / cell) + 1) * cell)
        }
        bg_timerfd_set_absolute(timerDescriptor, Int64(next), 0)
    }
}

/// The themes `t` cycles through, starting with the chosen one.
struct ThemeRotation {
    private(set) var themes: [Theme]
    private var index = 0

    init(first: Theme, others: [Theme]) {
        themes = [first] + others.filter { $0.name != first.name }
    }

    var current: Theme { themes[index] }

    mutating func advance() { index = (index + 1) % themes.count }
}
