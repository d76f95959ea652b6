import CNcurses
import Dashboard

/// What one code from `wget_wch` means. Pure: the tables here are the whole input decoding, minus
/// the calls that fetch mouse events.
enum InputEvent: Equatable {
    /// A key for the dashboard.
    case key(Key)
    /// A mouse event is waiting: fetch it with `getmouse` and decode it with `decodeMouse`.
    case mouse
    /// The terminal changed size (ncurses has already resized its screens).
    case resize
    /// Ctrl-L: the user asks for the screen to be repainted from scratch.
    case redraw
    /// Nothing the dashboard uses (function keys, stray control characters).
    case ignored

    /// A character `wget_wch` returned with `OK`: a Unicode scalar value, or a control character.
    static func decodeCharacter(_ value: UInt32) -> InputEvent {
        switch value {
        case 0x0A, 0x0D: .key(.enter)
        case 0x1B: .key(.escape)
        case 0x09: .key(.tab)
        case 0x7F, 0x08: .key(.backspace)
        case 0x0C: .redraw
        case ..<0x20, 0x80...0x9F: .ignored
        default: Unicode.Scalar(value).map { .key(.character(Character($0))) } ?? .ignored
        }
    }

    /// A key code `wget_wch` returned with `KEY_CODE_YES` (the `KEY_*` constants).
    static func decodeKeyCode(_ code: Int32) -> InputEvent {
        switch code {
        case KEY_UP: .key(.up)
        case KEY_DOWN: .key(.down)
        case KEY_LEFT: .key(.left)
        case KEY_RIGHT: .key(.right)
        // The keypad's corner keys (KEY_A1 …) are Home, PgUp, End, PgDn with Num Lock off;
        // screen/tmux terminfo entries call Home and End "find" and "select".
        case KEY_PPAGE, KEY_A3: .key(.pageUp)
        case KEY_NPAGE, KEY_C3: .key(.pageDown)
        case KEY_HOME, KEY_A1, KEY_FIND: .key(.home)
        case KEY_END, KEY_C1, KEY_SELECT: .key(.end)
        case KEY_ENTER: .key(.enter)
        case KEY_BTAB: .key(.backTab)
        case KEY_BACKSPACE: .key(.backspace)
        case KEY_MOUSE: .mouse
        case KEY_RESIZE: .resize
        default: .ignored
        }
    }

    /// Escape sequences terminals send for keys whose terminfo entry names a different sequence:
    /// tmux and screen send `ESC [1~`/`ESC [4~` for Home/End whatever `TERM` says, rxvt sends
    /// `ESC [7~`/`ESC [8~`, and cursor keys arrive in both normal (`ESC [A`) and application
    /// (`ESC OA`) mode. Each is taught to ncurses (`define_key`) unless it already means something.
    static let extraSequences: [(sequence: String, code: Int32)] = [
        ("\u{1B}[1~", KEY_HOME), ("\u{1B}[7~", KEY_HOME), ("\u{1B}[H", KEY_HOME), ("\u{1B}OH", KEY_HOME),
        ("\u{1B}[4~", KEY_END), ("\u{1B}[8~", KEY_END), ("\u{1B}[F", KEY_END), ("\u{1B}OF", KEY_END),
        ("\u{1B}[5~", KEY_PPAGE), ("\u{1B}[6~", KEY_NPAGE),
        ("\u{1B}[A", KEY_UP), ("\u{1B}[B", KEY_DOWN), ("\u{1B}[C", KEY_RIGHT), ("\u{1B}[D", KEY_LEFT),
        ("\u{1B}OA", KEY_UP), ("\u{1B}OB", KEY_DOWN), ("\u{1B}OC", KEY_RIGHT), ("\u{1B}OD", KEY_LEFT),
        ("\u{1B}[Z", KEY_BTAB), ("\u{1B}OM", KEY_ENTER),
    ]

    /// A mouse event's button state at screen cell (x, y): a left press (or click) is `.click`,
    /// buttons 4 and 5 are the wheel. Releases, motion and other buttons give nil.
    static func decodeMouse(buttonState: mmask_t, x: Int32, y: Int32) -> Key? {
        guard x >= 0, y >= 0 else { return nil }
        if buttonState & bg_button4_pressed() != 0 { return .wheelUp(x: Int(x), y: Int(y)) }
        let button5 = bg_button5_pressed()
        if button5 != 0, buttonState & button5 != 0 { return .wheelDown(x: Int(x), y: Int(y)) }
        if buttonState & bg_button1_pressed() != 0 { return .click(x: Int(x), y: Int(y)) }
        return nil
    }
}
