/// What a key does to the dashboard. ``KeyBindings/table`` says which key does which.
public enum KeyCommand: Hashable, Sendable {
    case quit
    /// Closes the overlay, or clears the filter when no overlay is open.
    case closeOverlayOrClearFilter
    case toggleHelp
    /// Opens the timeline (a lane per app over time); its own keys close it.
    case openTimeline
    /// Opens the details of the selected row, or closes them.
    case toggleDetails
    case focusNext
    case focusPrevious
    case focus(Panel)
    /// Moves the selection in the focused panel.
    case move(Movement)
    /// Starts typing the filter.
    case editFilter
    case nextSortColumn
    case reverseSort
    case nextTheme
    /// Opens the conditions menu, whose keys flip simulated conditions.
    case openConditions
    /// A command to the scheduler about the selected row.
    case act(PanelAction)
    /// Focuses the panel under the pointer and selects the row there.
    case selectUnderPointer
    /// Focuses the panel under the pointer and moves its selection by this many rows.
    case scrollUnderPointer(rows: Int)
    /// Opens the log pager on the selected row's app.
    case openLog
    /// Shows the next host of `bgtop --host`.
    case switchHost

    /// Where a movement takes the selection.
    public enum Movement: Hashable, Sendable {
        /// This many rows down (negative: up).
        case rows(Int)
        case pageUp
        case pageDown
        case first
        case last
    }
}

/// A command about the selected row that the scheduler carries out.
public enum PanelAction: Hashable, Sendable {
    case launch
    case expire
    /// Cancels a pending request, or in the transfers panel a transfer; asks first.
    case cancel
    case pauseOrResume
    /// Sends a test push (`{"aps":{"content-available":1}}`) to the selected row's app.
    case push
    /// Switches the selected app's background work off, or on again; asks first.
    case switchApp

    /// The action's name in status messages.
    public var verb: String {
        switch self {
        case .launch: return "simulate launch"
        case .expire: return "simulate expiration"
        case .cancel: return "cancel"
        case .pauseOrResume: return "pause or resume"
        case .push: return "send a push"
        case .switchApp: return "switch an app off or on"
        }
    }
}

/// What a binding is bound to: one key, or a kind of mouse action wherever it lands.
public enum KeyTrigger: Hashable, Sendable {
    case key(Key)
    case click
    case wheelUp
    case wheelDown

    /// The trigger `key` pulls: mouse actions lose their position.
    public init(_ key: Key) {
        switch key {
        case .click: self = .click
        case .wheelUp: self = .wheelUp
        case .wheelDown: self = .wheelDown
        default: self = .key(key)
        }
    }
}
