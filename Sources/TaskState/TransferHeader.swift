import FoundationEssentials

/// One request header field of a background transfer, sent on every attempt (and every resume).
///
/// Names and values are checked by ``TransferHeaderRules`` wherever a request is accepted: by
/// `bgctl`, by the library, and again by the scheduler (any program may write the inbox).
public struct TransferHeader: Codable, Hashable, Sendable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value` (spaces around the value are not part of it, RFC 9110 §5.5).
    public init?(line: String) {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        name = String(line[..<colon])
        value = String(line[line.index(after: colon)...]).trimmed(of: [" ", "\t"])
    }

    /// What `bgctl list`, `bgtop`, events and logs show in place of a secret header's value.
    public static let redactedValue = "redacted"
}
