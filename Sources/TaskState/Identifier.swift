import FoundationEssentials

/// A reverse-DNS identifier for an app, a task request or a transfer.
///
/// Identifiers become file names, so they are checked before anything else touches them:
/// letters, digits, `.`, `-` and `_`; 1 to 128 characters; no leading `.`.
public struct Identifier: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The longest identifier accepted.
    public static let maximumLength = 128

    /// The validated text.
    public let rawValue: String

    /// Validates `text`, throwing ``IdentifierError`` with the reason when it is not acceptable.
    public init(validating text: String) throws(IdentifierError) {
        if text.isEmpty { throw .empty }
        let bytes = Array(text.utf8)
        if bytes.count > Self.maximumLength { throw .tooLong(bytes.count) }
        if bytes.first == UInt8(ascii: ".") { throw .leadingDot(text) }
        for byte in bytes where !Self.isAllowed(byte) {
            throw .forbiddenCharacter(text, Self.describe(byte))
        }
        rawValue = text
    }

    /// Whether `text` would be accepted.
    public static func isValid(_ text: String) -> Bool {
        (try? Identifier(validating: text)) != nil
    }

    public var description: String { rawValue }

    public static func < (lhs: Identifier, rhs: Identifier) -> Bool { lhs.rawValue < rhs.rawValue }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        switch byte {
        case 0: return "NUL"
        case UInt8(ascii: "/"): return "'/'"
        case 0x21...0x7e: return "'\(Character(UnicodeScalar(byte)))'"
        default: return String(printf: "byte 0x%02X", UInt32(byte))
        }
    }
}

extension Identifier: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(validating: text)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// Why a string is not an ``Identifier``.
public enum IdentifierError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case tooLong(Int)
    case leadingDot(String)
    case forbiddenCharacter(String, String)

    public var description: String {
        switch self {
        case .empty:
            return "identifier is empty"
        case .tooLong(let count):
            return "identifier is \(count) bytes long; at most \(Identifier.maximumLength) are allowed"
        case .leadingDot(let text):
            return "identifier '\(text)' starts with '.'"
        case .forbiddenCharacter(let text, let what):
            let shown = text.replacing("\0", with: "\\0")
            return "identifier '\(shown)' contains \(what); only letters, digits, '.', '-' and '_' are allowed"
        }
    }
}

