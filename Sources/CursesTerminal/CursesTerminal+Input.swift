import CNcurses
import Dashboard

extension CursesTerminal {
    /// Reads everything pending on the terminal without blocking and decodes it: printable
    /// characters (any Unicode), arrows, PgUp/PgDn, Home/End, Enter, Esc (25 ms after the key, to
    /// tell it from an escape sequence), Tab, Shift-Tab, Backspace, and with the mouse on, left
    /// clicks and the wheel.
    ///
    /// Handled here and not returned: a resize reported by ncurses (updates `size`; the next
    /// `draw(_:)` repaints everything) and Ctrl-L (repaints the last frame at once). Other function
    /// and control keys are dropped. Returns an empty array when nothing is pending.
    public func readKeys() -> [Key] {
        guard !isClosed else { return [] }
        var keys: [Key] = []
        var value: wint_t = 0
        while true {
            let status = wget_wch(window, &value)
            if status == ERR { break }
            let event = status == KEY_CODE_YES
                ? InputEvent.decodeKeyCode(Int32(bitPattern: value))
                : InputEvent.decodeCharacter(UInt32(value))
            switch event {
            case let .key(key):
                keys.append(key)
            case .mouse:
                var mouse = MEVENT()
                if getmouse(&mouse) == OK,
                   let key = InputEvent.decodeMouse(buttonState: mouse.bstate, x: mouse.x, y: mouse.y) {
                    keys.append(key)
                }
            case .resize:
                adoptScreenSize()
            case .redraw:
                repaint()
            case .ignored:
                break
            }
        }
        return keys
    }
}
