/// What kind of push it is (`bgctl push --type`, the `type` of a push server's message).
///
/// A ``background`` push is rate limited, coalesced and may be held
/// (`docs/scheduling.md#background-pushes`). A ``voip`` push is PushKit's VoIP push: delivered
/// at once, outside the push budget, never coalesced or held, and the app must report an
/// incoming call for it (`reportCall`) within `voipReportSeconds` or be killed
/// (`docs/scheduling.md#voip-pushes`).
public enum PushType: String, Codable, Sendable, CaseIterable {
    case background
    case voip

    /// Reads a `--type` or message `type` value; the error is one line.
    public init(validating text: String) throws(PushTypeError) {
        guard let known = PushType(rawValue: text) else { throw PushTypeError(text: text) }
        self = known
    }
}

/// A push type that is neither `background` nor `voip`.
public struct PushTypeError: Error, Equatable, Sendable, CustomStringConvertible {
    public var text: String

    public var description: String {
        let shown = text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f } || text.utf8.count > 32
            ? "\(text.utf8.count) bytes" : "'\(text)'"
        return "push type must be background or voip, not \(shown)"
    }
}
