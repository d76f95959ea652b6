import TaskState
/// Every mark the timeline draws, declared once: its character (Unicode and ASCII), its style
/// (theme colours, and in monochrome bold, dim, underline or reverse) and its legend word. The
/// legend line is drawn from this list, so a mark cannot go unexplained.
enum TimelineMark: Int, CaseIterable {
    // How a run ended (the bar's cells).
    case completed, failed, expired, killed, running, lost
    /// A stretch in which the app was throttled (under and between its runs).
    case throttled
    // How a run was launched (the bar's first cell).
    case scheduler, push, simulated, app
    // Right of now: what comes next.
    case begin, planned, transfer

    /// The mark for how a run ended.
    init(_ outcome: HistoryRun.Outcome) {
        switch outcome {
        case .completed: self = .completed
        case .failed: self = .failed
        case .expired: self = .expired
        case .killed: self = .killed
        case .lost: self = .lost
        }
    }

    /// The mark for how a run was launched.
    init(_ origin: HistoryRun.Origin) {
        switch origin {
        case .scheduler: self = .scheduler
        case .push: self = .push
        case .simulated: self = .simulated
        case .app: self = .app
        }
    }

    /// Distinct per mark in either set, so the picture reads without colour.
    func character(_ glyphs: Glyphs) -> Character {
        let ascii = glyphs == .ascii
        switch self {
        case .completed: return ascii ? "=" : "█"
        case .failed: return ascii ? "?" : "░"
        case .expired: return ascii ? "!" : "▓"
        case .killed: return ascii ? "x" : "╳"
        case .running: return ascii ? "~" : "▒"
        case .lost: return ascii ? "-" : "┄"
        case .throttled: return ascii ? ":" : "┅"
        case .scheduler: return ascii ? ">" : "▸"
        case .push: return ascii ? "^" : "↑"
        case .simulated: return "s"
        case .app: return "a"
        case .begin: return ascii ? "r" : "◆"
        case .planned: return ascii ? "p" : "◇"
        case .transfer: return ascii ? "t" : "▽"
        }
    }

    /// The legend's word.
    var word: String {
        switch self {
        case .completed: return "completed"
        case .failed: return "failed"
        case .expired: return "expired"
        case .killed: return "killed"
        case .running: return "running"
        case .lost: return "end not logged"
        case .throttled: return "throttled"
        case .scheduler: return "by scheduler"
        case .push: return "by push"
        case .simulated: return "simulated"
        case .app: return "by app"
        case .begin: return "earliest begin"
        case .planned: return "planned"
        case .transfer: return "transfer start"
        }
    }

    /// Marks of a launch are drawn in the style of the run they start, bold.
    var isOrigin: Bool { [.scheduler, .push, .simulated, .app].contains(self) }

    func style(_ palette: Palette) -> CellStyle {
        let theme = palette.theme
        let background = theme.color("main_bg")
        func colour(_ key: String, bold: Bool = false, dim: Bool = false, underline: Bool = false, reverse: Bool = false) -> CellStyle {
            let mono = palette.mono
            return CellStyle(foreground: theme.color(key), background: background, bold: bold, dim: mono && dim,
                             reverse: mono && reverse, underline: mono && underline)
        }
        switch self {
        case .completed: return colour("temp_start")
        case .failed: return colour("upload_mid", underline: true)
        case .expired: return colour("temp_mid", bold: palette.mono)
        case .killed: return colour("temp_end", bold: true, reverse: true)
        case .running: return colour("download_mid", bold: true, underline: true)
        case .lost: return colour("inactive_fg", dim: true)
        case .throttled: return colour("hi_fg", dim: true, underline: true)
        case .scheduler, .push, .simulated, .app: return colour("main_fg", bold: true)
        case .begin, .planned: return colour("hi_fg", bold: true)
        case .transfer: return colour("download_end", bold: true)
        }
    }
}
