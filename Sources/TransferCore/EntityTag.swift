/// An entity tag (RFC 9110 §8.8.3): an opaque quoted string, optionally marked weak with `W/`.
public struct EntityTag: Hashable, Sendable, CustomStringConvertible {
    /// The quoted part without its quotes.
    public var opaque: String
    public var isWeak: Bool

    public init(opaque: String, isWeak: Bool) {
        self.opaque = opaque
        self.isWeak = isWeak
    }

    /// Parses `"xyz"` or `W/"xyz"`; `nil` for anything else (unquoted, stray quotes or control
    /// characters inside: etagc is %x21 / %x23-7E / obs-text, §8.8.3).
    public init?(_ field: String?) {
        guard let field else { return nil }
        var text = Substring(field.trimmingHTTPWhitespace)
        var weak = false
        if text.hasPrefix("W/") {
            weak = true
            text = text.dropFirst(2)
        }
        let bytes = Array(text.utf8)
        guard bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 else { return nil }
        let inner = bytes.dropFirst().dropLast()
        guard inner.allSatisfy({ $0 == 0x21 || (0x23...0x7E).contains($0) || $0 >= 0x80 }) else { return nil }
        opaque = String(decoding: inner, as: UTF8.self)
        isWeak = weak
    }

    /// The field value: `"xyz"` or `W/"xyz"`.
    public var description: String { (isWeak ? "W/" : "") + "\"" + opaque + "\"" }

    /// The strong comparison (§8.8.3.2): both strong and the same opaque string.
    public func strongMatch(_ other: EntityTag) -> Bool {
        !isWeak && !other.isWeak && opaque == other.opaque
    }
}
