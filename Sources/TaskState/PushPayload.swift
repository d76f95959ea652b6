import FoundationEssentials

/// The body of a background push: a JSON object whose `aps` object carries
/// `"content-available": 1`, at most 4096 bytes (APNs' limit for a background notification).
///
/// The text is kept as written, so what the app receives is byte for byte what was sent.
public struct PushPayload: Hashable, Sendable, CustomStringConvertible {
    /// APNs refuses larger payloads; so do `bgctl push` and the scheduler.
    public static let maximumBytes = 4096
    /// `{"aps":{"content-available":1}}`: a wake-up with nothing else.
    public static let wakeUp = try! PushPayload(validating: #"{"aps":{"content-available":1}}"#)

    /// The JSON text.
    public let text: String

    /// Checks `text`: a JSON object of at most ``maximumBytes`` bytes with `aps.content-available`
    /// equal to 1. The error is one line a person can act on.
    public init(validating text: String) throws(PushPayloadError) {
        let bytes = text.utf8.count
        guard bytes <= Self.maximumBytes else { throw .tooLarge(bytes) }
        guard let value = JSONValue(parsing: Data(text.utf8)) else { throw .notJSON }
        guard let members = value.object else { throw .notAnObject }
        // A whole number, so `true` or `"1"` is not taken for 1.
        guard let aps = members["aps"]?.object, aps["content-available"] == .integer(1) else {
            throw .notBackground
        }
        self.text = text
        self.fields = members
    }

    /// The payload's members, decoded once.
    public let fields: [String: JSONValue]

    public var description: String { text }
}

extension PushPayload: Codable {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(validating: text)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }
}

/// Why a payload cannot be a background push.
public enum PushPayloadError: Error, Equatable, Sendable, CustomStringConvertible {
    case tooLarge(Int)
    case notJSON
    case notAnObject
    case notBackground

    public var description: String {
        switch self {
        case .tooLarge(let bytes):
            return "push payload is \(bytes) bytes; at most \(PushPayload.maximumBytes) are allowed"
        case .notJSON:
            return "push payload is not valid JSON"
        case .notAnObject:
            return "push payload must be a JSON object, like {\"aps\":{\"content-available\":1}}"
        case .notBackground:
            return "push payload has no \"aps\":{\"content-available\":1}; only background pushes are delivered"
        }
    }
}

/// How the app's push handler says it went (`UIBackgroundFetchResult`).
public enum FetchResult: String, Codable, Sendable, CaseIterable {
    case newData, noData, failed
}

/// `apns-priority`: 10 delivers at once (within the app's budget), 5 also waits for the
/// conditions an app refresh needs and may be held.
public enum PushPriority: Int, Codable, Sendable, CaseIterable, Comparable {
    case conserve = 5
    case immediate = 10

    public static func < (lhs: PushPriority, rhs: PushPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
