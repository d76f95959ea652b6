/// A key press or mouse action, decoded by the terminal backend; the dashboard's input messages.
public enum Key: Hashable, Sendable {
    case character(Character)
    case up, down, left, right
    case pageUp, pageDown, home, end
    case enter, escape, tab, backTab, backspace
    /// A mouse button press at a cell.
    case click(x: Int, y: Int)
    case wheelUp(x: Int, y: Int)
    case wheelDown(x: Int, y: Int)
}

extension Key {
    /// Where a mouse action happened; nil for keys.
    public var pointer: (x: Int, y: Int)? {
        switch self {
        case .click(let x, let y), .wheelUp(let x, let y), .wheelDown(let x, let y): return (x, y)
        default: return nil
        }
    }
}
