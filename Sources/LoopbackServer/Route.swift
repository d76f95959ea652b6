/// What the server does at one path.
public struct Route: Hashable, Sendable {
    /// What a request to the path gets.
    public enum Content: Hashable, Sendable {
        /// A file's bytes, read as they are sent.
        case file(String)
        /// ``GeneratedBytes`` of `size` from `seed`; a new seed is a new entity (new ETag).
        case generated(size: Int64, seed: UInt64)
        /// Nothing to `GET`; an upload (`PUT`/`POST`) here is saved to this file as it arrives.
        case uploadTarget(saveTo: String)
        /// A redirect for every method: `status` (301, 302, 303, 307 or 308) with `Location:
        /// location` sent verbatim (relative or absolute) and an empty body. A `PUT` or `POST` body
        /// is read whole first (counted and hashed in its ``RequestRecord``, not kept), so a
        /// client can send it all before it follows. A loop is two routes naming each other.
        case redirect(status: Int, location: String)
    }

    public var content: Content
    /// Faults applied to every request, unless ``nextRequests`` has one queued.
    public var faults: Faults
    /// Faults for the next requests, one each, in order; then ``faults`` again.
    public var nextRequests: [Faults]

    public init(_ content: Content, faults: Faults = Faults(), nextRequests: [Faults] = []) {
        self.content = content
        self.faults = faults
        self.nextRequests = nextRequests
    }
}

/// What one upload delivered.
public struct ReceivedUpload: Hashable, Sendable {
    public var method: String
    public var byteCount: Int64
    /// SHA-256 of the bytes, 64 lowercase hex digits.
    public var sha256: String
    /// Whether the whole announced body arrived.
    public var isComplete: Bool
}

/// One request as the server saw it, for tests to check what a client sent.
public struct RequestRecord: Hashable, Sendable {
    public var method: String
    /// Path and query, as sent.
    public var target: String
    public var range: String?
    public var ifRange: String?
    /// The status answered (`0` when the connection closed first).
    public var status: Int
    /// The `Accept-Encoding` header, as sent.
    public var acceptEncoding: String? = nil
    /// Body bytes received with a `PUT` or `POST` (0 for other methods).
    public var bodyBytes: Int64 = 0
    /// SHA-256 of the body bytes received with a `PUT` or `POST`, 64 lowercase hex digits; `nil`
    /// for other methods. Two records with the same hash and count carry the same upload, e.g.
    /// one sent again whole after a `307` or `308`.
    public var sha256: String? = nil
    /// Every header field of the request, in order, as sent.
    public var headers: [Field] = []

    public struct Field: Hashable, Sendable {
        public var name: String
        public var value: String
    }

    /// The values of the fields named `name` (case-insensitive), in order.
    public func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
}
