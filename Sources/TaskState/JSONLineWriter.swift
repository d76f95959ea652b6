/// Writes JSON text into bytes reserved for it beforehand: for the few lines the scheduler writes
/// for every command (the journal record, the event line), where `JSONEncoder`'s tree of values and
/// its generic calls cost more than the text itself.
///
/// Strings are escaped as `JSONFormat`'s encoder escapes them (RFC 8259 §7: quotation mark, reverse
/// solidus, `\b \t \n \f \r`, the other control characters as `\u00xx`, `/` as it is), so a line
/// written here has the same bytes as the encoder's.
public struct JSONLineWriter {
    public private(set) var bytes: [UInt8] = []

    public init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Text that is already JSON (punctuation, keys, numbers).
    public mutating func raw(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// A JSON array of strings.
    public mutating func strings(_ list: [String]) {
        bytes.append(UInt8(ascii: "["))
        for (index, text) in list.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            string(text)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `text` as a JSON string. Runs that need no escape are copied whole: a journal record is
    /// mostly file text, and byte by byte it was 4% of a socket command's work.
    public mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in utf8.indices where Self.needsEscape(utf8[index]) {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                escape(utf8[index])
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private mutating func escape(_ byte: UInt8) {
        let named: UInt8? = switch byte {
        case 0x08: UInt8(ascii: "b")
        case 0x09: UInt8(ascii: "t")
        case 0x0A: UInt8(ascii: "n")
        case 0x0C: UInt8(ascii: "f")
        case 0x0D: UInt8(ascii: "r")
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
        default: nil
        }
        bytes.append(UInt8(ascii: "\\"))
        if let named {
            bytes.append(named)
        } else {
            bytes.append(contentsOf: "u00".utf8)
            bytes.append(Self.hex[Int(byte >> 4)])
            bytes.append(Self.hex[Int(byte & 0x0F)])
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)
}
