/// The dashboard's keys, each declared once. Key handling dispatches through this table; the
/// footer, the help overlay and `bgtop --help` are drawn from it.
public enum KeyBindings {
    /// Every binding, in the order the help lists them.
    public static let table: [KeyBinding] = [
        KeyBinding("l", "simulate launch of the selected request", [(.key(.character("l")), .act(.launch))],
                   panels: [.pending], refusedInReadOnly: true, footer: FooterHint("l", "launch", position: 0)),
        KeyBinding("e", "simulate expiration of the selected handler", [(.key(.character("e")), .act(.expire))],
                   panels: [.running], refusedInReadOnly: true, footer: FooterHint("e", "expire", position: 0)),
        KeyBinding("c", "cancel the selected request or transfer (y/n)", [(.key(.character("c")), .act(.cancel))],
                   panels: [.pending, .transfers], refusedInReadOnly: true, footer: FooterHint("c", "cancel", position: 1)),
        KeyBinding("p", "pause or resume the selected transfer", [(.key(.character("p")), .act(.pauseOrResume))],
                   panels: [.transfers], refusedInReadOnly: true, footer: FooterHint("p", "pause", position: 0)),
        KeyBinding("Tab / Shift-Tab, 1-4", "focus a panel",
                   [(.key(.tab), .focusNext), (.key(.backTab), .focusPrevious)]
                       + Panel.allCases.map { (.key(.character(Character(String($0.rawValue + 1)))), .focus($0)) },
                   footer: FooterHint("tab", "panel", position: 5)),
        KeyBinding("Up/Down, j/k", "move the selection",
                   [(.key(.up), .move(.rows(-1))), (.key(.down), .move(.rows(1))),
                    (.key(.character("k")), .move(.rows(-1))), (.key(.character("j")), .move(.rows(1)))]),
        KeyBinding("PgUp/PgDn", "page up, page down", [(.key(.pageUp), .move(.pageUp)), (.key(.pageDown), .move(.pageDown))]),
        KeyBinding("Home/End, g/G", "first row, last row",
                   [(.key(.home), .move(.first)), (.key(.end), .move(.last)),
                    (.key(.character("g")), .move(.first)), (.key(.character("G")), .move(.last))]),
        KeyBinding("/", "filter as you type; Enter keeps, Esc clears", [(.key(.character("/")), .editFilter)],
                   footer: FooterHint("/", "filter", position: 3)),
        KeyBinding("s / S", "cycle the sort column / reverse the order",
                   [(.key(.character("s")), .nextSortColumn), (.key(.character("S")), .reverseSort)],
                   footer: FooterHint("s", "sort", position: 4)),
        KeyBinding("Enter", "details of the selected row", [(.key(.enter), .toggleDetails)],
                   footer: FooterHint("↵", "details", position: 2, asciiKey: "enter")),
        KeyBinding("t", "next theme", [(.key(.character("t")), .nextTheme)],
                   footer: FooterHint("t", "theme", position: 6)),
        KeyBinding("mouse", "click selects, wheel scrolls",
                   [(.click, .selectUnderPointer), (.wheelUp, .scrollUnderPointer(rows: -3)), (.wheelDown, .scrollUnderPointer(rows: 3))]),
        KeyBinding("?", "this help", [(.key(.character("?")), .toggleHelp)],
                   footer: FooterHint("?", "help", position: 7)),
        KeyBinding("Esc", "close an overlay, clear the filter", [(.key(.escape), .closeOverlayOrClearFilter)]),
        KeyBinding("q", "quit", [(.key(.character("q")), .quit)],
                   footer: FooterHint("q", "quit", position: 8)),
    ]

    /// The binding a key belongs to and the command it runs there, if the key is bound.
    public static func lookup(_ key: Key) -> (binding: KeyBinding, command: KeyCommand)? {
        byTrigger[KeyTrigger(key)].map { (table[$0.index], $0.command) }
    }

    // A trigger bound twice would be ambiguous; the first binding wins, and a test refuses the table.
    private static let byTrigger: [KeyTrigger: (index: Int, command: KeyCommand)] = {
        var map: [KeyTrigger: (index: Int, command: KeyCommand)] = [:]
        for (index, binding) in table.enumerated() {
            for (trigger, command) in binding.triggers where map[trigger] == nil { map[trigger] = (index, command) }
        }
        return map
    }()

    /// The footer's hints while `panel` has the focus, in order.
    public static func footerHints(for panel: Panel) -> [(hint: FooterHint, binding: KeyBinding)] {
        table.enumerated()
            .compactMap { index, binding in binding.footer.map { (index, $0, binding) } }
            .filter { $0.2.panels.contains(panel) }
            .sorted { ($0.1.position, $0.0) < ($1.1.position, $1.0) }
            .map { (hint: $0.1, binding: $0.2) }
    }

    /// The footer words of the bindings read-only mode refuses: "launch, expire, cancel and pause".
    public static var refusedInReadOnlySummary: String {
        list(table.filter(\.refusedInReadOnly).map { $0.footer?.label ?? $0.keys })
    }

    /// "a, b and c".
    private static func list(_ words: [String]) -> String {
        guard words.count > 1 else { return words.joined() }
        return words.dropLast().joined(separator: ", ") + " and " + words.last!
    }

    /// The key list of `bgtop --help`: one line per binding, as in the help overlay.
    public static var commandLineHelp: String {
        let width = table.map(\.keys.count).max() ?? 0
        let lines = table.map { "  " + $0.keys + String(repeating: " ", count: width + 3 - $0.keys.count) + $0.help }
        let refused = list(table.filter(\.refusedInReadOnly).map(\.keys))
        return (["Keys:"] + lines + ["With --read-only, \(refused) are disabled."]).joined(separator: "\n")
    }
}
