import CNcurses
import Dashboard
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal backend: copies cell grids to the screen and decodes key presses, and nothing
/// else. All layout and styling decisions live in `Dashboard`.
///
/// ncurses keeps its state in process globals, so this class is deliberately not `Sendable`: open
/// one terminal, and use it from one thread (the one that runs the dashboard's event loop).
/// Typical loop: `poll()` on `inputDescriptor` (and a signalfd for SIGWINCH), then `readKeys()`,
/// `refreshSize()` after SIGWINCH, and `draw(_:)` with the new frame.
public final class CursesTerminal {
    /// The screen size in cells. Changes in `refreshSize()`, and in `readKeys()` when ncurses reports
    /// a resize itself: compare it before and after to know when to lay out again.
    public private(set) var size: ScreenSize
    /// How many colours cells can have; `.none` when colours were switched off or the terminal has none.
    public let colorDepth: ColorDepth
    /// Whether the locale's character set is UTF-8, so Unicode box drawing, blocks and symbols show.
    /// When false, box drawing is sent as the terminal's line-drawing set and other non-ASCII
    /// characters as `?`: the dashboard should prefer ASCII.
    public let unicode: Bool
    /// The descriptor to `poll()` for input (standard input). After it becomes readable, call
    /// `readKeys()`, which drains everything pending.
    public var inputDescriptor: Int32 { STDIN_FILENO }

    /// The ncurses SCREEN. Never freed with `delscreen`: a crash handler elsewhere may still call
    /// `endwin()` after `close()`, which must find a screen to talk to.
    let screen: OpaquePointer
    let window: UnsafeMutablePointer<WINDOW>
    var palette: CursesStyles
    /// The last frame drawn, to paint only what changed.
    var previousFrame: CellGrid?
    /// Set after a resize or Ctrl-L: the next frame clears and repaints the whole screen.
    var needsFullRepaint = true
    private(set) var isClosed = false
    private let mouseEnabled: Bool
    private let savedCursor: Int32

    private init(screen: OpaquePointer, window: UnsafeMutablePointer<WINDOW>, colorDepth: ColorDepth,
                 palette: CursesStyles, unicode: Bool, mouse: Bool, savedCursor: Int32) {
        self.screen = screen
        self.window = window
        self.colorDepth = colorDepth
        self.palette = palette
        self.unicode = unicode
        mouseEnabled = mouse
        self.savedCursor = savedCursor
        var rows: Int32 = 0, columns: Int32 = 0
        bg_getmaxyx(window, &rows, &columns)
        size = ScreenSize(width: Int(columns), height: Int(rows))
    }

    deinit {
        close()
    }

    /// Opens the terminal with `newterm()` on stdin/stdout (never `initscr()`, which exits the process
    /// on a bad `TERM`), in the alternate screen, with the cursor hidden, keys unbuffered and not
    /// echoed, and Esc reported after 25 ms.
    ///
    /// Sets the process locale from the environment (`setlocale(LC_ALL, "")`, needed for UTF-8),
    /// except `LC_NUMERIC`, which stays "C" so number formatting does not change under the program.
    /// When the environment names a UTF-8 locale that is not installed, the character type falls
    /// back to C.UTF-8.
    /// Sizes come from the terminal, never from `LINES`/`COLUMNS`, which are removed from the
    /// environment (they are stale after the first resize, and they stop ncurses from noticing one).
    ///
    /// - Parameters:
    ///   - mouse: report left clicks and the wheel (no motion events, so moving the mouse costs nothing).
    ///   - colors: use colours if the terminal has them; false (NO_COLOR, a monochrome theme) gives
    ///     `.none` and attributes only.
    /// - Throws: `TerminalError` with one line when stdin or stdout is not a terminal, `TERM` is unset
    ///   or "dumb", or ncurses cannot use the terminal type.
    public static func open(mouse: Bool, colors: Bool) throws(TerminalError) -> CursesTerminal {
        guard isatty(STDIN_FILENO) == 1 else { throw TerminalError("standard input is not a terminal") }
        guard isatty(STDOUT_FILENO) == 1 else { throw TerminalError("standard output is not a terminal") }
        guard let termValue = getenv("TERM"), termValue.pointee != 0 else {
            throw TerminalError("TERM is not set (set it to the terminal's type, e.g. xterm-256color)")
        }
        let term = String(cString: termValue)
        guard term != "dumb" else {
            throw TerminalError("TERM is \"dumb\": a terminal that can move the cursor is needed")
        }

        if setlocale(LC_ALL, "") == nil, Self.environmentAsksForUTF8() {
            // A UTF-8 locale that is not installed (common in containers): keep UTF-8 anyway.
            setlocale(LC_CTYPE, "C.UTF-8")
        }
        setlocale(LC_NUMERIC, "C")
        let unicode = Self.localeIsUTF8()
        // Sizes come from the kernel (TIOCGWINSZ) only: exported LINES/COLUMNS are stale after the
        // first resize, and while they are set ncurses' own SIGWINCH handling never reports one.
        unsetenv("LINES")
        unsetenv("COLUMNS")
        use_tioctl(true)
        guard let screen = newterm(term, bg_stdout(), bg_stdin()) else {
            throw TerminalError("cannot use terminal type \"\(term)\" (no usable terminfo entry)")
        }
        set_term(screen)
        guard let window = bg_stdscr() else {
            endwin()
            delscreen(screen)
            throw TerminalError("cannot use terminal type \"\(term)\" (ncurses has no screen)")
        }

        cbreak()
        noecho()
        nonl()
        intrflush(window, false)
        keypad(window, true)
        for extra in InputEvent.extraSequences where key_defined(extra.sequence) == 0 {
            define_key(extra.sequence, extra.code)
        }
        nodelay(window, true)
        scrollok(window, false)
        leaveok(window, true)
        set_escdelay(25)
        let savedCursor = curs_set(0)
        if mouse {
            mousemask(bg_click_and_wheel_events(), nil)
            mouseinterval(0)
        }

        var depth = ColorDepth.none
        var defaultColors = true
        var colorCount = 0, pairCount = 0
        if colors, has_colors(), start_color() != ERR {
            defaultColors = use_default_colors() != ERR
            colorCount = Int(bg_colors())
            pairCount = Int(bg_color_pairs())
            depth = ColorDepth(colorCount: colorCount)
        }
        let palette = CursesStyles(depth: depth, colorCount: colorCount, pairCount: pairCount,
                                   defaultColors: defaultColors)
        return CursesTerminal(screen: screen, window: window, colorDepth: depth, palette: palette,
                              unicode: unicode, mouse: mouse, savedCursor: savedCursor)
    }

    /// Leaves the dashboard and gives the terminal back exactly as it was: mouse reporting off, the
    /// cursor as it was before (visible), the shell's screen and tty modes restored (`endwin`).
    /// Idempotent, and cheap enough for an exit path (a signalfd handler, `defer`, a fatal error
    /// path). After `close()` the other methods do nothing. Also runs on deinit.
    ///
    /// While the terminal is open and the program has not taken these signals itself, ncurses'
    /// own handlers restore the terminal on Ctrl-Z (and redraw on `fg`) and on SIGINT/SIGTERM.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        if mouseEnabled { mousemask(0, nil) }
        curs_set(savedCursor == ERR ? 1 : savedCursor)
        endwin()
        fflush(bg_stdout())
    }

    /// Re-reads the terminal's size from the kernel and resizes ncurses' screens when it changed.
    /// Call it after SIGWINCH (e.g. from a signalfd); the next `draw(_:)` then repaints the whole
    /// screen. When SIGWINCH is not blocked, ncurses notices it too and `readKeys()` updates `size`.
    @discardableResult
    public func refreshSize() -> ScreenSize {
        guard !isClosed else { return size }
        var rows: Int32 = 0, columns: Int32 = 0
        if bg_tty_size(STDOUT_FILENO, &rows, &columns) == 0, is_term_resized(rows, columns) {
            resizeterm(rows, columns)
        }
        adoptScreenSize()
        return size
    }

    /// Takes ncurses' current screen size; a change schedules a full repaint.
    func adoptScreenSize() {
        var rows: Int32 = 0, columns: Int32 = 0
        bg_getmaxyx(window, &rows, &columns)
        let newSize = ScreenSize(width: Int(columns), height: Int(rows))
        if newSize != size {
            size = newSize
            needsFullRepaint = true
        }
    }

    /// Whether the locale the environment names (LC_ALL, else LC_CTYPE, else LANG) is a UTF-8 one.
    private static func environmentAsksForUTF8() -> Bool {
        for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
            guard let value = getenv(name), value.pointee != 0 else { continue }
            let locale = String(cString: value).lowercased()
            return locale.contains("utf-8") || locale.contains("utf8")
        }
        return false
    }

    private static func localeIsUTF8() -> Bool {
        guard let codeset = nl_langinfo(nl_item(CODESET)) else { return false }
        let name = String(cString: codeset).lowercased()
        return name == "utf-8" || name == "utf8"
    }
}
