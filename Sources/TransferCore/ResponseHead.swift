/// The status and header fields of an HTTP response, as the rules in this module read them.
///
/// Field names compare without regard to case (RFC 9110 §5.1). A field the rules need once and
/// find more than once with different values is a contradiction, and is read as absent-and-invalid
/// by ``single(_:)``.
public struct ResponseHead: Hashable, Sendable {
    public var status: Int
    /// Fields in the order received; names as sent.
    public var fields: [Field]

    public struct Field: Hashable, Sendable {
        public var name: String
        public var value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(status: Int, fields: [Field] = []) {
        self.status = status
        self.fields = fields
    }

    /// Every value of the field `name`, in order, with surrounding whitespace removed.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.asciiLowercased == name.asciiLowercased }.map { $0.value.trimmingHTTPWhitespace }
    }

    /// What a singleton field says: `.absent`, `.value` when it appears once (or repeated with the
    /// same value), `.conflicting` when repeated with different values.
    public func single(_ name: String) -> SingleField {
        let all = values(name)
        guard let first = all.first else { return .absent }
        return all.allSatisfy { $0 == first } ? .value(first) : .conflicting
    }

    /// The field's value when it appears once (or repeated identically); `nil` otherwise.
    public func first(_ name: String) -> String? {
        if case .value(let value) = single(name) { return value }
        return nil
    }

    public enum SingleField: Hashable, Sendable {
        case absent
        case value(String)
        case conflicting
    }
}

extension StringProtocol {
    /// ASCII-only lowercasing: header names are ASCII, and locale rules must not apply.
    var asciiLowercased: String {
        String(decoding: utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
    }

    /// Without leading and trailing spaces and tabs (RFC 9110 §5.6.3 OWS).
    var trimmingHTTPWhitespace: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}

/// A non-negative decimal integer with digits only (no sign, no spaces), as RFC 9110 writes
/// lengths and positions (§8.6, §14.4); `nil` for anything else or for a value past `Int64.max`.
func parseDigits<S: StringProtocol>(_ text: S) -> Int64? {
    guard !text.isEmpty else { return nil }
    var value: Int64 = 0
    for byte in text.utf8 {
        guard (0x30...0x39).contains(byte) else { return nil }
        let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - 0x30))
        if overflow1 || overflow2 { return nil }
        value = sum
    }
    return value
}
