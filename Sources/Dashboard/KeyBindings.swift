/// The dashboard's keys, each declared once. Key handling dispatches through this table; the
/// footer, the help overlay and `bgtop --help` are drawn from it.
public enum KeyBindings {
    /// Every binding, in the order the help lists them.
    public static let table: [KeyBinding] = [
        KeyBinding(keys: "l", help: "simulate launch of the selected request",
                   triggers: [(.key(.character("l")), .act(.launch))], panels: [.pending], refusedInReadOnly: true,
                   footer: FooterHint(key: "l", label: "launch", position: 0)),
        KeyBinding(keys: "e", help: "simulate expiration of the selected handler",
                   triggers: [(.key(.character("e")), .act(.expire))], panels: [.running], refusedInReadOnly: true,
                   footer: FooterHint(key: "e", label: "expire", position: 0)),
        KeyBinding(keys: "c", help: "cancel the selected request or transfer (y/n)",
                   triggers: [(.key(.character("c")), .act(.cancel))], panels: [.pending, .transfers], refusedInReadOnly: true,
                   footer: FooterHint(key: "c", label: "cancel", position: 1)),
        KeyBinding(keys: "p", help: "pause or resume the selected transfer",
                   triggers: [(.key(.character("p")), .act(.pauseOrResume))], panels: [.transfers], refusedInReadOnly: true,
                   footer: FooterHint(key: "p", label: "pause", position: 0)),
        KeyBinding(keys: "P", help: "send a test push to the selected row's app",
                   triggers: [(.key(.character("P")), .act(.push))], panels: [.pending, .running, .transfers], refusedInReadOnly: true,
                   footer: FooterHint(key: "P", label: "push", position: 1)),
        KeyBinding(keys: "C", help: "simulate power, network, idle, low power",
                   triggers: [(.key(.character("C")), .openConditions)], refusedInReadOnly: true,
                   footer: FooterHint(key: "C", label: "conditions", position: 6)),
        KeyBinding(keys: "d", help: "switch the selected app off or on (y/n)",
                   triggers: [(.key(.character("d")), .act(.switchApp))], panels: [.apps], refusedInReadOnly: true,
                   footer: FooterHint(key: "d", label: "off/on", position: 0)),
        KeyBinding(keys: "Tab / Shift-Tab, 1-5", help: "focus a panel",
                   triggers: [(.key(.tab), .focusNext), (.key(.backTab), .focusPrevious)]
                       + Panel.allCases.map { (.key(.character(Character(String($0.rawValue + 1)))), .focus($0)) },
                   footer: FooterHint(key: "tab", label: "panel", position: 5)),
        KeyBinding(keys: "Up/Down, j/k", help: "move the selection",
                   triggers: [(.key(.up), .move(.rows(-1))), (.key(.down), .move(.rows(1))),
                              (.key(.character("k")), .move(.rows(-1))), (.key(.character("j")), .move(.rows(1)))]),
        KeyBinding(keys: "PgUp/PgDn", help: "page up, page down",
                   triggers: [(.key(.pageUp), .move(.pageUp)), (.key(.pageDown), .move(.pageDown))]),
        KeyBinding(keys: "Home/End, g/G", help: "first row, last row",
                   triggers: [(.key(.home), .move(.first)), (.key(.end), .move(.last)),
                              (.key(.character("g")), .move(.first)), (.key(.character("G")), .move(.last))]),
        KeyBinding(keys: "/", help: "filter as you type; Enter keeps, Esc clears", triggers: [(.key(.character("/")), .editFilter)],
                   footer: FooterHint(key: "/", label: "filter", position: 3)),
        KeyBinding(keys: "s / S", help: "cycle the sort column / reverse the order",
                   triggers: [(.key(.character("s")), .nextSortColumn), (.key(.character("S")), .reverseSort)],
                   footer: FooterHint(key: "s", label: "sort", position: 4)),
        KeyBinding(keys: "Enter", help: "details of the selected row", triggers: [(.key(.enter), .toggleDetails)],
                   footer: FooterHint(key: "↵", label: "details", position: 2, ascii: "enter")),
        KeyBinding(keys: "T", help: "timeline: each app's runs over time",
                   triggers: [(.key(.character("T")), .openTimeline)]),
        KeyBinding(keys: "o", help: "the selected row's app log (follow, search)",
                   triggers: [(.key(.character("o")), .openLog)],
                   footer: FooterHint(key: "o", label: "log", position: 6)),
        KeyBinding(keys: "H", help: "next host (bgtop --host given twice or more)",
                   triggers: [(.key(.character("H")), .switchHost)]),
        KeyBinding(keys: "t", help: "next theme", triggers: [(.key(.character("t")), .nextTheme)],
                   footer: FooterHint(key: "t", label: "theme", position: 6)),
        KeyBinding(keys: "mouse", help: "click selects, wheel scrolls",
                   triggers: [(.click, .selectUnderPointer), (.wheelUp, .scrollUnderPointer(rows: -3)),
                              (.wheelDown, .scrollUnderPointer(rows: 3))]),
        KeyBinding(keys: "?", help: "this help", triggers: [(.key(.character("?")), .toggleHelp)],
                   footer: FooterHint(key: "?", label: "help", position: 7)),
        KeyBinding(keys: "Esc", help: "close an overlay, clear the filter", triggers: [(.key(.escape), .closeOverlayOrClearFilter)]),
        KeyBinding(keys: "q", help: "quit", triggers: [(.key(.character("q")), .quit)],
                   footer: FooterHint(key: "q", label: "quit", position: 8)),
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
