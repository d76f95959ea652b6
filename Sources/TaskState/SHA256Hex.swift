/// A SHA-256 digest as 64 hexadecimal digits, the way `sha256sum` prints it: what an app may ask
/// a finished download to match (`bgctl transfer download --sha256`, the `sha256` field of a
/// `transferCreate` command and of a transfer record).
///
/// Upper- or lowercase digits are accepted; ``rawValue`` is always lowercase, so digests compare
/// as text. The check lives here, beside the wire format, so that `bgctl`, the app library and
/// the scheduler refuse the same values with the same words.
public struct SHA256Hex: Hashable, Sendable, CustomStringConvertible {
    /// Hexadecimal digits in a SHA-256 digest (32 bytes).
    public static let length = 64

    /// The digest, 64 lowercase hexadecimal digits.
    public let rawValue: String

    /// Validates `text`, throwing ``SHA256HexError`` with the reason when it is not a digest.
    public init(validating text: String) throws(SHA256HexError) {
        let bytes = Array(text.utf8)
        guard bytes.count == Self.length else { throw .wrongLength(bytes.count) }
        var lowered = [UInt8]()
        lowered.reserveCapacity(Self.length)
        for (offset, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"):
                lowered.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "F"):
                lowered.append(byte + (UInt8(ascii: "a") - UInt8(ascii: "A")))
            default:
                throw .notHexadecimal(position: offset + 1, character: Self.describe(byte))
            }
        }
        rawValue = String(decoding: lowered, as: UTF8.self)
    }

    /// Whether `text` would be accepted.
    public static func isValid(_ text: String) -> Bool {
        (try? SHA256Hex(validating: text)) != nil
    }

    public var description: String { rawValue }

    /// A byte as a message shows it: printable ASCII quoted, anything else by its value (the
    /// text may come from a hostile inbox entry, and the message must stay one readable line).
    private static func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0x21...0x7e: return "'\(Character(UnicodeScalar(byte)))'"
        case 0x20: return "a space"
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            return "byte 0x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
}

/// Why a string is not a ``SHA256Hex``. The value itself is never repeated: it may be long or
/// hold control characters, and the reason names what is wrong with it.
public enum SHA256HexError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Not 64 characters (counted in UTF-8 bytes).
    case wrongLength(Int)
    /// A character that is not a hexadecimal digit, at a 1-based position.
    case notHexadecimal(position: Int, character: String)

    public var description: String {
        switch self {
        case .wrongLength(let count):
            return "a SHA-256 digest is \(SHA256Hex.length) hexadecimal digits, not \(count) characters"
        case .notHexadecimal(let position, let character):
            return "a SHA-256 digest is \(SHA256Hex.length) hexadecimal digits; character \(position) is \(character)"
        }
    }
}
