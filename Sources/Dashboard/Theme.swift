/// A colour theme in btop's vocabulary: keys are btop's theme keys (main_bg, main_fg, title, hi_fg,
/// selected_bg, selected_fg, inactive_fg, graph_text, meter_bg, proc_misc, cpu_box, mem_box, net_box,
/// proc_box, div_line, temp_start, temp_mid, temp_end, cpu_start, cpu_mid, cpu_end,
/// free_start/mid/end, cached_*, available_*, used_*, download_start/mid/end, upload_start/mid/end,
/// process_start/mid/end).
///
/// A theme holds only the colours its file gave; every lookup falls back, the way btop does it:
/// the theme's own value (an explicit empty value `""` is `.terminalDefault` and counts as given),
/// then btop's derived defaults for keys older btop themes lack (`meter_bg` and `graph_text` take the
/// theme's `inactive_fg`, `process_*` take its `cpu_*`), then `Theme.builtInDefault`.
/// See docs/themes.md for what each key colours in bgtop.
public struct Theme: Hashable, Sendable {
    public var name: String
    /// Only the keys the theme file gave; lookups through `color(_:)` fall back to the built-in default.
    public var colors: [String: TerminalColor]

    public init(name: String, colors: [String: TerminalColor]) {
        self.name = name
        self.colors = colors
    }

    /// Every key a theme may set, in btop's order. Keys outside this list are ignored by the parser.
    public static let keys: [String] = [
        "main_bg", "main_fg", "title", "hi_fg", "selected_bg", "selected_fg", "inactive_fg",
        "graph_text", "meter_bg", "proc_misc", "cpu_box", "mem_box", "net_box", "proc_box", "div_line",
    ] + gradientPrefixes.flatMap { [$0 + "_start", $0 + "_mid", $0 + "_end"] }

    /// The gradient prefixes (`temp` for `temp_start`/`temp_mid`/`temp_end`, …).
    public static let gradientPrefixes: [String] =
        ["temp", "cpu", "free", "cached", "available", "used", "download", "upload", "process"]

    /// The theme's own value, else the btop-derived one, else `Theme.builtInDefault`'s, else
    /// `.terminalDefault` (for keys no theme knows).
    public func color(_ key: String) -> TerminalColor {
        if let own = colors[key] { return own }
        if let source = Theme.derivedFrom[key], let own = colors[source] { return own }
        return Theme.defaultColors[key] ?? .terminalDefault
    }

    /// The colour `fraction` (clamped to 0...1; NaN counts as 0) of the way along the gradient
    /// `prefix_start` → `prefix_mid` → `prefix_end`, interpolated in RGB. As in btop, an empty
    /// (terminal default) `_mid` means a two-colour gradient and an empty `_end` a single colour;
    /// a theme that sets its own `_start` or `_end` but no `_mid` at all also gets a two-colour
    /// gradient rather than the default's middle. `.terminalDefault` when there is no start colour.
    public func gradient(_ prefix: String, at fraction: Double) -> TerminalColor {
        let start = color(prefix + "_start")
        guard case .rgb = start else { return .terminalDefault }
        let end = color(prefix + "_end")
        guard case .rgb = end else { return start }
        let f = fraction.isNaN ? 0 : min(max(fraction, 0), 1)
        let mid = gradientMiddle(prefix)
        guard case .rgb = mid else { return Theme.mix(start, end, f) }
        return f <= 0.5 ? Theme.mix(start, mid, f * 2) : Theme.mix(mid, end, (f - 0.5) * 2)
    }

    /// True when every key resolves to the terminal's default colour, as in the built-in monochrome
    /// theme or `Themes/monochrome.theme`; the view then uses bold, reverse and dim instead of colour.
    public var isMonochrome: Bool {
        Theme.keys.allSatisfy { color($0) == .terminalDefault }
    }

    /// Compiled in: a dark theme; the same values as `Themes/default.theme`.
    public static let builtInDefault = Theme(name: "default", colors: defaultColors)

    /// Compiled in: every key the terminal's default colour.
    public static let monochrome = Theme(
        name: "monochrome",
        colors: Dictionary(uniqueKeysWithValues: keys.map { ($0, TerminalColor.terminalDefault) })
    )

    // MARK: - Internals

    private func gradientMiddle(_ prefix: String) -> TerminalColor {
        let key = prefix + "_mid"
        if let own = colors[key] { return own }
        if colors[prefix + "_start"] != nil || colors[prefix + "_end"] != nil { return .terminalDefault }
        return color(key)
    }

    private static func mix(_ a: TerminalColor, _ b: TerminalColor, _ t: Double) -> TerminalColor {
        guard case let .rgb(ar, ag, ab) = a, case let .rgb(br, bg, bb) = b else { return a }
        func channel(_ x: UInt8, _ y: UInt8) -> UInt8 {
            let value = (Double(x) + (Double(y) - Double(x)) * t).rounded()
            return UInt8(min(max(value, 0), 255))
        }
        return .rgb(channel(ar, br), channel(ag, bg), channel(ab, bb))
    }

    /// btop's fallbacks for keys that older theme files do not have.
    private static let derivedFrom: [String: String] = [
        "meter_bg": "inactive_fg", "graph_text": "inactive_fg",
        "process_start": "cpu_start", "process_mid": "cpu_mid", "process_end": "cpu_end",
    ]

    private static func hex(_ value: UInt32) -> TerminalColor {
        .rgb(UInt8((value >> 16) & 0xff), UInt8((value >> 8) & 0xff), UInt8(value & 0xff))
    }

    private static func grey(_ value: UInt8) -> TerminalColor { .rgb(value, value, value) }

    /// Keep in step with Themes/default.theme (a test compares the two).
    private static let defaultColors: [String: TerminalColor] = [
        "main_bg": grey(0x00),
        "main_fg": grey(0xcc),
        "title": grey(0xee),
        "hi_fg": hex(0xe5734f),
        "selected_bg": hex(0x2b4a73),
        "selected_fg": grey(0xee),
        "inactive_fg": grey(0x5a),
        "graph_text": grey(0x80),
        "meter_bg": grey(0x30),
        "proc_misc": hex(0x0de756),
        "cpu_box": hex(0x5f8a66),
        "mem_box": hex(0x8a8450),
        "net_box": hex(0x6a66a8),
        "proc_box": hex(0x9a5c5c),
        "div_line": grey(0x30),
        "temp_start": hex(0x50c878),
        "temp_mid": hex(0xe5c07b),
        "temp_end": hex(0xff4d5e),
        "cpu_start": hex(0x77ca9b),
        "cpu_mid": hex(0xcbc06c),
        "cpu_end": hex(0xdc4c4c),
        "free_start": hex(0x384f21),
        "free_mid": hex(0xb5e685),
        "free_end": hex(0xdcff85),
        "cached_start": hex(0x163350),
        "cached_mid": hex(0x74e6fc),
        "cached_end": hex(0x26c5ff),
        "available_start": hex(0x4e3f0e),
        "available_mid": hex(0xffd77a),
        "available_end": hex(0xffb814),
        "used_start": hex(0x592b26),
        "used_mid": hex(0xd9626d),
        "used_end": hex(0xff4769),
        "download_start": hex(0x3d6fb8),
        "download_mid": hex(0x5fa3e8),
        "download_end": hex(0xa8d8ff),
        "upload_start": hex(0x7a3e9d),
        "upload_mid": hex(0xb06ad8),
        "upload_end": hex(0xe2b8ff),
        "process_start": hex(0x80d0a3),
        "process_mid": hex(0xdcd179),
        "process_end": hex(0xd45454),
    ]
}
