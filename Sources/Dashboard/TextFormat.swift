import FoundationEssentials
import TaskState

/// Small formatting helpers for cells.
enum TextFormat {
    /// `text` cut to `width` cells with an ellipsis, or padded with spaces; control characters
    /// are written out first (``TerminalText``), so the cut is measured on what is shown.
    static func fit(_ text: String, _ width: Int, ellipsis: Character = "…") -> String {
        guard width > 0 else { return "" }
        let text = TerminalText.escaped(text)
        if text.count <= width { return text + String(repeating: " ", count: width - text.count) }
        return String(text.prefix(width - 1)) + String(ellipsis)
    }

    /// Like ``fit(_:_:ellipsis:)`` but keeps the end of the text.
    static func fitTail(_ text: String, _ width: Int, ellipsis: Character = "…") -> String {
        guard width > 0 else { return "" }
        let text = TerminalText.escaped(text)
        if text.count <= width { return text + String(repeating: " ", count: width - text.count) }
        return String(ellipsis) + String(text.suffix(width - 1))
    }

    /// `1.5 MB`, `320 B`, `4.0 GB` (decimal units, as transfer tools print them).
    static func bytes(_ value: Int64) -> String {
        let units = ["B", "kB", "MB", "GB", "TB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1000 && unit < units.count - 1 {
            amount /= 1000
            unit += 1
        }
        return unit == 0 ? "\(value) B" : String(printf: "%.1f ", amount) + units[unit]
    }

    /// A bar of `width` cells filled to `fraction`.
    static func bar(_ fraction: Double, width: Int, glyphs: Glyphs) -> String {
        guard width > 0 else { return "" }
        let filled = Int((min(1, max(0, fraction)) * Double(width)).rounded())
        return String(repeating: glyphs.barFull, count: filled) + String(repeating: glyphs.barEmpty, count: width - filled)
    }

    /// `HH:MM:SS` in UTC for event times (the state is all UTC).
    static func clock(_ date: Date, seconds: Bool = true) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let parts = calendar.dateComponents([.hour, .minute, .second], from: date)
        let hm = String(printf: "%02ld:%02ld", parts.hour ?? 0, parts.minute ?? 0)
        return seconds ? hm + String(printf: ":%02ld", parts.second ?? 0) : hm
    }
}
