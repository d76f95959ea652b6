/// What a key does while the timeline is open.
public enum TimelineCommand: Hashable, Sendable {
    case close
    case zoomIn
    case zoomOut
    case scrollBack
    case scrollForward
    /// Back to a window around now.
    case now
    case previousLane
    case nextLane
    /// Lists the selected lane's runs in the window, or hides the list.
    case toggleRuns
}

/// Keys of the timeline that belong together: what they do and how the hint line and the docs name them.
public struct TimelineBinding: Sendable {
    /// How the docs name the keys.
    public let keys: String
    public let help: String
    /// Each key and the command it runs.
    public let triggers: [(key: Key, command: TimelineCommand)]
    /// The hint line's key (Unicode, then ASCII) and word.
    public let hint: (key: String, ascii: String, label: String)
}

/// The timeline's keys, declared once: the timeline takes keys before the key table (as the
/// cancel confirmation does), and its hint line and docs/dashboard.md are drawn from this table.
public enum TimelineKeys {
    public static let table: [TimelineBinding] = [
        TimelineBinding(keys: "Left/Right, h/l", help: "scroll back or ahead by a quarter of the window",
                        triggers: [(.left, .scrollBack), (.right, .scrollForward), (.character("h"), .scrollBack),
                                   (.character("l"), .scrollForward)],
                        hint: ("←→", "left/right", "scroll")),
        TimelineBinding(keys: "+/-", help: "zoom in or out (10 min, 30 min, 1 h, 3 h, 12 h, 24 h)",
                        triggers: [(.character("+"), .zoomIn), (.character("="), .zoomIn), (.character("-"), .zoomOut),
                                   (.character("_"), .zoomOut)],
                        hint: ("+-", "+-", "zoom")),
        TimelineBinding(keys: "Home, 0", help: "back to now", triggers: [(.home, .now), (.character("0"), .now)],
                        hint: ("0", "0", "now")),
        TimelineBinding(keys: "Up/Down, j/k", help: "select a lane",
                        triggers: [(.up, .previousLane), (.down, .nextLane), (.character("k"), .previousLane),
                                   (.character("j"), .nextLane)],
                        hint: ("↑↓", "up/down", "lane")),
        TimelineBinding(keys: "Enter", help: "list the selected lane's runs in the window", triggers: [(.enter, .toggleRuns)],
                        hint: ("↵", "enter", "runs")),
        TimelineBinding(keys: "Esc, T, q", help: "close the timeline",
                        triggers: [(.escape, .close), (.character("T"), .close), (.character("q"), .close)],
                        hint: ("esc", "esc", "close")),
    ]

    /// The command `key` runs in the timeline, if it is one of its keys.
    public static func command(for key: Key) -> TimelineCommand? {
        byKey[key]
    }

    private static let byKey: [Key: TimelineCommand] = {
        var map: [Key: TimelineCommand] = [:]
        for binding in table {
            for trigger in binding.triggers where map[trigger.key] == nil { map[trigger.key] = trigger.command }
        }
        return map
    }()
}

extension DashboardState {
    /// A key while the timeline is open: the timeline's keys move it; any other key does nothing
    /// (the timeline covers the panels the rest of the keys act on).
    mutating func handleTimeline(_ key: Key, position: TimelinePosition, snapshot: DashboardSnapshot) -> [DashboardEffect] {
        var position = position
        switch TimelineKeys.command(for: key) {
        case .close?:
            overlay = .none
            return []
        case .zoomIn?: position.zoom(by: -1)
        case .zoomOut?: position.zoom(by: 1)
        case .scrollBack?: position.scroll(by: -1)
        case .scrollForward?: position.scroll(by: 1)
        case .now?: position.offset = 0
        case .previousLane?: position.lane = max(0, min(position.lane, TimelineLanes.apps(snapshot).count - 1) - 1)
        case .nextLane?: position.lane = max(0, min(position.lane + 1, TimelineLanes.apps(snapshot).count - 1))
        case .toggleRuns?: position.showsRuns.toggle()
        case nil: return []
        }
        overlay = .timeline(position)
        return []
    }
}
