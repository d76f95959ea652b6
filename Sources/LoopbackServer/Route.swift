/// What the server does at one path.
public struct Route: Hashable, Sendable {
    /// What a `GET` or `HEAD` returns.
    public enum Content: Hashable, Sendable {
        /// A file's bytes, read as they are sent.
        case file(String)
        /// ``GeneratedBytes`` of `size` from `seed`; a new seed is a new entity (new ETag).
        case generated(size: Int64, seed: UInt64)
        /// Nothing to `GET`; an upload (`PUT`/`POST`) here is saved to this file as it arrives.
        case uploadTarget(saveTo: String)
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

/// Misbehaviour to inject into a response. Set per route (``Route``) or per request with query
/// parameters (see ``init(query:)``); a query parameter overrides the route's value.
public struct Faults: Hashable, Sendable {
    /// Sends the body at about this many bytes per second.
    public var bytesPerSecond: Int?
    /// Closes the connection after this many body bytes of the response (or of an upload received).
    public var dropAfter: Int64?
    /// Sends nothing for this many seconds once ``stallAfter`` body bytes are out.
    public var stallSeconds: Double?
    /// Where the stall starts, in body bytes (default 0: right after the head).
    public var stallAfter: Int64?
    /// Announces this many bytes more in `Content-Length` than it sends, then closes.
    public var extraAnnouncedLength: Int64?
    /// Answers `200` with the whole entity even to a range request.
    public var ignoreRange: Bool
    /// Answers with this status and a short text body instead of the content.
    public var status: Int?

    public init(bytesPerSecond: Int? = nil, dropAfter: Int64? = nil, stallSeconds: Double? = nil,
                stallAfter: Int64? = nil, extraAnnouncedLength: Int64? = nil, ignoreRange: Bool = false,
                status: Int? = nil) {
        self.bytesPerSecond = bytesPerSecond
        self.dropAfter = dropAfter
        self.stallSeconds = stallSeconds
        self.stallAfter = stallAfter
        self.extraAnnouncedLength = extraAnnouncedLength
        self.ignoreRange = ignoreRange
        self.status = status
    }

    /// Faults from query parameters: `rate=BYTES_PER_SECOND`, `drop=BYTES`, `stall=SECONDS`,
    /// `stallAfter=BYTES`, `lie=EXTRA_BYTES`, `ignoreRange=1`, `status=CODE`. Unknown or
    /// malformed parameters are ignored.
    public init(query: [String: String]) {
        self.init()
        bytesPerSecond = query["rate"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        dropAfter = query["drop"].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        stallSeconds = query["stall"].flatMap { Double($0) }.flatMap { $0 > 0 ? $0 : nil }
        stallAfter = query["stallAfter"].flatMap { Int64($0) }
        extraAnnouncedLength = query["lie"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        ignoreRange = query["ignoreRange"].map { $0 == "1" || $0 == "true" } ?? false
        status = query["status"].flatMap { Int($0) }.flatMap { (100...599).contains($0) ? $0 : nil }
    }

    /// These faults with every value set in `other` taking its place.
    public func overridden(by other: Faults) -> Faults {
        Faults(bytesPerSecond: other.bytesPerSecond ?? bytesPerSecond,
               dropAfter: other.dropAfter ?? dropAfter,
               stallSeconds: other.stallSeconds ?? stallSeconds,
               stallAfter: other.stallAfter ?? stallAfter,
               extraAnnouncedLength: other.extraAnnouncedLength ?? extraAnnouncedLength,
               ignoreRange: other.ignoreRange || ignoreRange,
               status: other.status ?? status)
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
}
