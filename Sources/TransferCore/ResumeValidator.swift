/// What identifies the representation whose first bytes a download holds, so that a later
/// request can ask for the rest of *the same* representation.
///
/// Only a strong entity tag allows that: RFC 9110 §13.1.5 forbids a weak tag in `If-Range`, and
/// §15.3.7.3 allows combining parts only when both carry the same strong validator. A
/// `Last-Modified` date is kept for display but never resumed with (it is strong only under
/// conditions a client cannot check, §8.8.2.2).
public struct ResumeValidator: Hashable, Sendable, Codable {
    /// The response's `ETag`, verbatim (quotes and any `W/` included).
    public var etag: String?
    /// The response's `Last-Modified`, verbatim.
    public var lastModified: String?
    /// The response's `Content-Encoding`; `nil` for identity. Parts of differently encoded
    /// responses are different byte sequences and never combine.
    public var contentEncoding: String?

    public init(etag: String? = nil, lastModified: String? = nil, contentEncoding: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
        self.contentEncoding = contentEncoding
    }

    /// The validator a response carries.
    public init(of head: ResponseHead) {
        self.init(etag: head.first("ETag"), lastModified: head.first("Last-Modified"),
                  contentEncoding: Self.encoding(of: head))
    }

    /// The strong entity tag, if there is one.
    public var strongTag: EntityTag? {
        guard let tag = EntityTag(etag), !tag.isWeak else { return nil }
        return tag
    }

    /// The value to send in `If-Range`: only a strong entity tag (§13.1.5).
    public var ifRangeValue: String? { strongTag?.description }

    /// Whether held bytes of this representation may be resumed.
    public var canResume: Bool { strongTag != nil }

    /// Why held bytes of this representation cannot be resumed, for the event that says so.
    public var whyNotResumable: String? {
        if canResume { return nil }
        if let etag, EntityTag(etag)?.isWeak == true { return "its ETag \(etag) is weak" }
        if etag != nil { return "its ETag is malformed" }
        if lastModified != nil { return "it has only a Last-Modified date, no ETag" }
        return "it has no ETag"
    }

    /// The `Content-Encoding` of a response, lowercased; `nil` for none or `identity`.
    static func encoding(of head: ResponseHead) -> String? {
        let codings = head.values("Content-Encoding")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingHTTPWhitespace.asciiLowercased }
            .filter { !$0.isEmpty && $0 != "identity" }
        return codings.isEmpty ? nil : codings.joined(separator: ", ")
    }
}
