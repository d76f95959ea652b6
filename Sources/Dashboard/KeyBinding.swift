/// One row of the key table: the keys, what each does, where it applies and how the help, the
/// footer and `bgtop --help` name it. Declared once, in ``KeyBindings/table``.
public struct KeyBinding: Sendable {
    /// How the help names the keys ("s / S").
    public internal(set) var keys: String
    /// What the keys do, in the help's words.
    public internal(set) var help: String
    /// Each key of the binding and the command it runs.
    public internal(set) var triggers: [(trigger: KeyTrigger, command: KeyCommand)]
    /// The panels where the keys work; pressed elsewhere, the status line names the first one.
    public internal(set) var panels: [Panel] = Panel.allCases
    /// A command to the scheduler: refused, and shown greyed, in read-only mode.
    public internal(set) var refusedInReadOnly = false
    /// The binding's hint in the footer, if it has one.
    public internal(set) var footer: FooterHint?
}

/// A key hint in the footer, shown while the focused panel is one of the binding's panels.
public struct FooterHint: Sendable, Hashable {
    /// The key as the footer shows it.
    public internal(set) var key: String
    /// One word for what the key does.
    public internal(set) var label: String
    /// Hints are shown in increasing position; equal positions keep the table's order.
    public internal(set) var position: Int
    /// The key where borders are ASCII, when it is not `key` (there is no `↵`).
    var ascii: String?

    /// The key as the footer shows it with `glyphs`.
    public func key(for glyphs: Glyphs) -> String { glyphs == .ascii ? ascii ?? key : key }
}
