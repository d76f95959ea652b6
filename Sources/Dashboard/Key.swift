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
