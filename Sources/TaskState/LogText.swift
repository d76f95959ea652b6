/// Turns a log line's bytes into text that is safe to put on a terminal: anything a handler prints
/// (invalid UTF-8, escape sequences, a megabyte without a newline) must neither break the screen
/// nor reach the terminal as a command.
public enum LogText {
    /// The most bytes of one line kept for display; a longer line is cut (``LogLine/isCut``).
    public static let maximumBytes = 2048

    /// `bytes` decoded as UTF-8 (invalid sequences become U+FFFD), tabs expanded, C0 controls and
    /// DEL in caret notation (`^[`), C1 controls as `<9B>`, a trailing carriage return dropped.
    public static func displayable<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = String(decoding: bytes, as: UTF8.self)
        if text.unicodeScalars.last == "\r" { text.unicodeScalars.removeLast() }
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = String.UnicodeScalarView()
        var column = 0
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09:
                let spaces = 4 - column % 4
                result.append(contentsOf: repeatElement(Unicode.Scalar(0x20), count: spaces))
                column += spaces
                continue
            case 0x00...0x1F, 0x7F:
                result.append("^")
                result.append(Unicode.Scalar(UInt8(scalar.value ^ 0x40)))
                column += 2
                continue
            case 0x80...0x9F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                result.append(contentsOf: "<\(hex)>".unicodeScalars)
                column += 4
                continue
            default:
                result.append(scalar)
                column += 1
            }
        }
        return String(result)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}
