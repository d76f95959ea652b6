import FoundationEssentials

/// Any JSON value, for the few readers that look at a document's shape before decoding it into a
/// type (a push payload, a watch request, the settings file's keys).
///
/// Whole numbers stay ``integer`` so that a value read and written again keeps its text;
/// `true` is never taken for 1 nor `"1"` for a number.
public enum JSONValue: Hashable, Sendable, Codable {
    case null
    case bool(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// `data` decoded, or `nil` when it is not JSON text (a bare value at the top is JSON too).
    public init?(parsing data: Data) {
        guard let value = try? JSONFormat.decode(JSONValue.self, from: data) else { return nil }
        self = value
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The members, when this is an object.
    public var object: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    /// The text, when this is a string.
    public var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}
