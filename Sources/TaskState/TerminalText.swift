/// Text that came from a client (a finishing task's name, a transfer's destination or URL, an
/// identifier echoed in a refusal, an event's message) made safe to put on a terminal.
///
/// Any program of the user can write the inbox, so such text may hold escape sequences that would
/// recolour, move the cursor or retitle the terminal of whoever reads `bgctl` or `bgtop` output. Every
/// text path to a terminal goes through ``escaped(_:)``; JSON output keeps its own escaping instead.
/// App log lines in the log pager have their own notation (``LogText``).
public enum TerminalText {
    /// `text` with every control character written out: `\n`, `\r`, `\t`, and the other C0 controls,
    /// DEL and the C1 controls (U+0080–U+009F) as `\xNN` (ESC is `\x1b`). Everything else, including
    /// a backslash, is kept as it is; text without a control character is returned unchanged.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                result.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x0A: result.append(contentsOf: #"\n"#.unicodeScalars)
            case 0x0D: result.append(contentsOf: #"\r"#.unicodeScalars)
            case 0x09: result.append(contentsOf: #"\t"#.unicodeScalars)
            default:
                let hex = String(scalar.value, radix: 16)
                result.append(contentsOf: "\\x\(hex.count < 2 ? "0" + hex : hex)".unicodeScalars)
            }
        }
        return String(result)
    }

    /// Whether `text` holds a character ``escaped(_:)`` would write out.
    public static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isControl)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
