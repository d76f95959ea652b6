import TaskState

/// What the person has done to the view: focus, selection, filter, sort, overlays. Pure data;
/// ``DashboardState/handle(_:snapshot:)`` turns keys into new state and effects.
public struct DashboardState: Sendable, Hashable {
    /// An overlay drawn over the panels.
    public enum Overlay: Sendable, Hashable {
        case none
        case help
        case detail
        /// Waiting for y/n before cancelling this request.
        case confirmCancel(app: Identifier, identifier: Identifier)
        /// Waiting for y/n before cancelling this transfer.
        case confirmCancelTransfer(app: Identifier, identifier: Identifier)
        /// The conditions menu: its keys flip simulated conditions (``ConditionsMenu``).
        case conditions
        /// The timeline over the panels, at this zoom and scroll (``TimelineKeys`` move it).
        case timeline(TimelinePosition)
        /// Waiting for y/n before switching the app's background work on (`enable`) or off.
        case confirmAppSwitch(app: Identifier, enable: Bool)
        /// An app's log (``DashboardState/logPager``); it takes every key while open.
        case logPager
    }

    /// A one-line message under the panels.
    public struct Status: Sendable, Hashable {
        public var text: String
        public var isError: Bool

        public init(_ text: String, isError: Bool = false) {
            self.text = text
            self.isError = isError
        }
    }

    public var focus: Panel = .pending
    /// Selected row id per panel; kept across refreshes so the selection follows its item.
    public var selection: [Panel: String] = [:]
    /// Last known row index per panel, used when the selected item disappears.
    public var selectionIndex: [Panel: Int] = [:]
    public var scroll: [Panel: Int] = [:]
    public var sortColumn: [Panel: Int] = [:]
    public var sortReversed: [Panel: Bool] = [:]
    public var filter = ""
    /// The filter is being typed.
    public var isEditingFilter = false
    public var overlay: Overlay = .none
    /// The first binding the help overlay shows, when the terminal is too short for all of them.
    public var helpOffset = 0
    public var status: Status?
    public var readOnly: Bool
    public var themeName: String
    /// The log pager's state while ``Overlay/logPager`` is open.
    public var logPager: LogPager?
    /// Condition overrides the conditions menu sent that the state read since does not show yet:
    /// a second press flips from what was sent, not again from the same stale snapshot.
    public var sentConditions = ConditionOverrides()

    public init(readOnly: Bool = false, themeName: String = "default") {
        self.readOnly = readOnly
        self.themeName = themeName
    }
}

/// What a key asks the shell to do besides changing the view.
public enum DashboardEffect: Sendable, Hashable {
    /// Send a command to the scheduler; `summary` names it in the status line.
    case send(CommandAction, summary: String)
    case nextTheme
    case quit
    /// Read a part of an app's log and give the answer to ``DashboardState/receiveLog(_:)``;
    /// while ``DashboardState/followedLog`` names the app, tell ``DashboardState/logFileChanged()``
    /// when the log changes.
    case readLog(LogRequest)
    /// Show the next host of `bgtop --host`.
    case switchHost
}
