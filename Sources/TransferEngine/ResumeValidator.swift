/// What identifies the version of a downloaded entity, so that a later attempt can ask for the
/// rest of *the same* entity with `If-Range`.
public struct ResumeValidator: Hashable, Sendable, Codable {
    /// The response's `ETag`, verbatim (quotes and any `W/` included).
    public var etag: String?
    /// The response's `Last-Modified`, verbatim.
    public var lastModified: String?

    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// The value to send in `If-Range`, or `nil` when there is nothing a server may compare.
    ///
    /// A weak ETag never matches in `If-Range` (RFC 9110 §13.1.5), so it is skipped for
    /// `Last-Modified`.
    public var ifRangeValue: String? {
        if let etag, !etag.isEmpty, !etag.hasPrefix("W/") { return etag }
        if let lastModified, !lastModified.isEmpty { return lastModified }
        return nil
    }

    /// Whether there is nothing to resume with.
    public var isEmpty: Bool { ifRangeValue == nil }
}
