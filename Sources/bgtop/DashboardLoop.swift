import CLinuxSupport
import CursesTerminal
import Dashboard
import FoundationEssentials
import Glibc
import TaskState

/// The dashboard's event loop: one `poll` over the terminal, the state source's descriptors
/// (inotify on the local state directory, or the ssh connections of `bgtop --host`), a timer that
/// ticks only while something on screen counts down, and signals.
/// Everything else is the pure ``DashboardView`` and ``DashboardState``.
final class DashboardLoop {
    /// What the loop sleeps on.
    private enum Source: Hashable {
        case terminal, tick, signals
        /// The state source's descriptor at this index of ``DashboardSource/descriptors``.
        case state(Int)
    }

    private let terminal: CursesTerminal
    private let source: DashboardSource
    private var themes: ThemeRotation
    private let glyphs: Glyphs
    private var state: DashboardState
    private var snapshot: DashboardSnapshot
    private let signalDescriptor: Int32
    private let timerDescriptor: Int32
    /// Told each snapshot read from changed state (`--demo` reacts to completed transfers).
    private let stateRead: ((DashboardSnapshot) -> Void)?

    /// The shortest time between two reloads of changed files while changes keep coming: short
    /// enough that the screen follows the scheduler, long enough that a stream of commits does
    /// not keep the dashboard busy.
    static let reloadInterval = 0.2

    init(terminal: CursesTerminal, source: DashboardSource, themes: ThemeRotation, readOnly: Bool, signals: sigset_t,
         initialStatus: String? = nil, stateRead: ((DashboardSnapshot) -> Void)? = nil) throws {
        self.terminal = terminal
        self.source = source
        self.stateRead = stateRead
        self.themes = themes
        glyphs = terminal.unicode ? .unicode : .ascii
        state = DashboardState(readOnly: readOnly, themeName: themes.current.name)
        if let initialStatus { state.status = DashboardState.Status(initialStatus, isError: true) }
        snapshot = source.snapshot(now: Date())
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
    }

    /// Runs until `q` or a terminating signal. Returns the signal that ended it, if any.
    ///
    /// Keys come first: they are handled and drawn from the state in memory before anything is
    /// read. The source reads what changed when it is due (for the local directory at most once
    /// per ``reloadInterval``, so a stream of commits costs one reload and one redraw per
    /// interval); `poll` gets a timeout only while the source waits for something.
    func run() -> Int32? {
        draw()
        while true {
            var poll = KernelPoll<Source>()
            poll.watch(.terminal, terminal.inputDescriptor)
            poll.watch(.tick, timerDescriptor)
            poll.watch(.signals, signalDescriptor)
            for (index, entry) in source.descriptors.enumerated() {
                if entry.output { poll.watchOutput(.state(index), entry.descriptor) } else { poll.watch(.state(index), entry.descriptor) }
            }
            armTimer()
            guard let ready = poll.wait(milliseconds: source.pollTimeout()) else { return nil }
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
            let readyState = Set(ready.compactMap { (source: Source) -> Int? in
                if case .state(let index) = source { return index }
                return nil
            })
            if source.service(ready: readyState) {
                // The old snapshot is let go first, so that the source's own copy is the only
                // one and its 100 000 rows change in place rather than being copied.
                snapshot = DashboardSnapshot(now: snapshot.now, stateDirectory: snapshot.stateDirectory)
                snapshot = source.snapshot(now: Date())
                redraw = true
                stateRead?(snapshot)
            }
            // The pager's log: answers to its reads, and the log changing while it is open.
            let log = source.takeLogNews()
            for excerpt in log.excerpts {
                _ = perform(state.receiveLog(excerpt))
                redraw = true
            }
            if log.changed {
                _ = perform(state.logFileChanged())
                redraw = true
            }
            if ready.contains(.tick) {
                // A tick only moves the clock: the redraw below recomputes the countdowns from
                // the state in memory; nothing is read.
                bg_timerfd_drain(timerDescriptor)
                redraw = true
            }
            for result in source.takeReports() {
                state.status = DashboardState.Status(result.text, isError: result.isError)
                redraw = true
            }
            if redraw { draw() }
        }
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
        source.followLog(state.followedLog)
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
                source.send(action, summary: summary)
            case .readLog(let request):
                source.readLog(request)
            case .switchHost:
                state.status = source.switchHost()
                snapshot = source.snapshot(now: Date())
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
        var followedCell: Double?
        if case .timeline(let position) = state.overlay, position.offset == 0 {
            followedCell = position.cellDuration(screenWidth: terminal.size.width)
        }
        let next = DashboardWake.next(after: Date().timeIntervalSince1970, countdown: snapshot.hasCountdown, followedCell: followedCell)
        let value = DashboardWake.timerValue(next)
        bg_timerfd_set_absolute(timerDescriptor, value.seconds, value.nanoseconds)
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
