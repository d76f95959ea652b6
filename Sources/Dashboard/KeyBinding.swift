/// One row of the key table: the keys, what each does, where it applies and how the help, the
/// footer and `bgtop --help` name it. Declared once, in ``KeyBindings/table``.
public struct KeyBinding: Sendable {
    /// How the help names the keys ("s / S").
    public let keys: String
    /// What the keys do, in the help's words.
    public let help: String
    /// Each key of the binding and the command it runs.
    public let triggers: [(trigger: KeyTrigger, command: KeyCommand)]
    /// The panels where the keys work; pressed elsewhere, the status line names the first one.
    public let panels: [Panel]
    /// A command to the scheduler: refused, and shown greyed, in read-only mode.
    public let refusedInReadOnly: Bool
    /// The binding's hint in the footer, if it has one.
    public let footer: FooterHint?

    /// A binding; without `panels` it works in every panel.
    public init(_ keys: String, _ help: String, _ triggers: [(trigger: KeyTrigger, command: KeyCommand)],
                panels: [Panel] = Panel.allCases, refusedInReadOnly: Bool = false, footer: FooterHint? = nil) {
        self.keys = keys
        self.help = help
        self.triggers = triggers
        self.panels = panels
        self.refusedInReadOnly = refusedInReadOnly
        self.footer = footer
    }
}

/// A key hint in the footer, shown while the focused panel is one of the binding's panels.
public struct FooterHint: Sendable, Hashable {
    /// The key as the footer shows it.
    public let key: String
    /// The key where borders are ASCII (no `↵`).
    public let asciiKey: String
    /// One word for what the key does.
    public let label: String
    /// Hints are shown in increasing position; equal positions keep the table's order.
    public let position: Int

    public init(_ key: String, _ label: String, position: Int, asciiKey: String? = nil) {
        self.key = key
        self.asciiKey = asciiKey ?? key
        self.label = label
        self.position = position
    }
}
