/// A parsed `Content-Range` response field (RFC 9110 §14.4): `bytes 100-199/1000`,
/// `bytes 100-199/*` or the unsatisfied form `bytes */1000`.
public struct ContentRange: Hashable, Sendable {
    /// The first and last byte sent; `nil` for the unsatisfied form (`bytes */1000`).
    public var first: Int64?
    public var last: Int64?
    /// The whole representation's length, when the server says (`nil` for `*`).
    public var total: Int64?

    public init(first: Int64?, last: Int64?, total: Int64?) {
        self.first = first
        self.last = last
        self.total = total
    }

    /// Parses the field; `nil` for anything that is not one valid byte range (other units,
    /// `last < first`, `last >= total`, signs, spaces inside numbers, overflow).
    public init?(_ field: String?) {
        guard let field else { return nil }
        let text = field.trimmingHTTPWhitespace
        // §14.4: the range unit is case-insensitive; exactly one space follows it.
        guard text.utf8.count > 6, text.prefix(6).asciiLowercased == "bytes " else { return nil }
        let spec = text.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[1] == "*" {
            total = nil
        } else {
            guard let value = parseDigits(parts[1]) else { return nil }
            total = value
        }
        if parts[0] == "*" {
            // §14.4: the unsatisfied form always carries the complete length.
            guard total != nil else { return nil }
            first = nil
            last = nil
            return
        }
        let bounds = parts[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = parseDigits(bounds[0]), let last = parseDigits(bounds[1]),
              last >= first else { return nil }
        // §14.4: a range whose last position is not below the complete length is invalid.
        if let total, last >= total { return nil }
        self.first = first
        self.last = last
    }

    /// The number of bytes the range covers (`last - first + 1`); `nil` for the unsatisfied form.
    public var length: Int64? {
        guard let first, let last else { return nil }
        return last - first + 1
    }
}
