/// Misbehaviour to inject into a response. Set per route (``Route``) or per request with query
/// parameters (see ``init(query:)``); a query parameter overrides the route's value.
///
/// When several faults apply to one `GET` or `HEAD`, the first that fits answers: ``status``;
/// then a ``Route/Content/redirect(status:location:)`` route; then, for a request with a `Range`
/// header, ``statusForRangeRequests`` and then ``unsatisfiable``; then the entity, shaped by the
/// rest (the range faults only touch a `206`, the framing and pacing faults any body). A ``hold``
/// keeps the request waiting before any of them answers.
public struct Faults: Hashable, Sendable {
    /// Which validators the server advertises, and so which `If-Range` values can match.
    public enum ETagMode: String, Hashable, Sendable, CaseIterable {
        /// A strong `ETag` and `Last-Modified`.
        case normal
        /// Neither: the client has nothing to resume with safely.
        case none
        /// A weak `ETag` (`W/"…"`) and `Last-Modified`. A weak ETag never matches `If-Range`
        /// (RFC 9110 §13.1.5), so only the date can.
        case weak
        /// `Last-Modified` only.
        case lastModifiedOnly
    }

    /// How a forced `416` describes the entity.
    public enum UnsatisfiableMode: String, Hashable, Sendable, CaseIterable {
        /// `Content-Range: bytes */<size>`, as RFC 9110 asks.
        case withLength
        /// No `Content-Range`: the client learns nothing about the size.
        case withoutLength
    }

    /// Sends the body at about this many bytes per second; for an upload, reads it that slowly.
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
    /// A `206` sends this many bytes past the end its `Content-Range` names: the entity's next
    /// bytes (anything once past its end). `Content-Length` counts them, so the framing is
    /// consistent and only `Content-Range` lies.
    public var rangeBodyExtra: Int64?
    /// A `206` says `Content-Range: bytes N-M/*`, hiding the entity's size.
    public var unknownTotal: Bool
    /// No `Content-Length`: the body ends when the server closes the connection (HTTP/1.1
    /// close-delimited, with `Connection: close`). With ``dropAfter`` a body cut short looks to
    /// the client like one that ended cleanly.
    public var omitContentLength: Bool
    /// The validators advertised; `If-Range` matches follow them.
    public var etag: ETagMode
    /// Answers a range request with `206` even when its `If-Range` does not match, as a broken
    /// server or proxy does.
    public var ignoreIfRange: Bool
    /// Serves another representation: ``Route/Content/generated(size:seed:)`` content with seed
    /// `seed &+ generation`, so the bytes, ETag and Last-Modified all differ. Files ignore it.
    public var generation: UInt64?
    /// Answers a request that has a `Range` header with this status and an empty body (say `204`
    /// or `202`); a request without one is served as usual.
    public var statusForRangeRequests: Int?
    /// A `206` carries `Content-Encoding: <value>` and a body that is not the entity's bytes
    /// (each byte XOR 0x5A, no real compression): a client must reject it on the header.
    public var contentEncodingOnRange: String?
    /// Answers every range request with `416`.
    public var unsatisfiable: UnsatisfiableMode?
    /// Sent verbatim as `Retry-After` with an injected ``status`` (delta-seconds or an HTTP-date).
    public var retryAfter: String?
    /// Keeps the request waiting before it is answered until the test releases the hold: a
    /// download before its head, an upload once its body is read. No query parameter sets it.
    public var hold: ResponseHold?

    public init(bytesPerSecond: Int? = nil, dropAfter: Int64? = nil, stallSeconds: Double? = nil,
                stallAfter: Int64? = nil, extraAnnouncedLength: Int64? = nil, ignoreRange: Bool = false,
                status: Int? = nil, rangeBodyExtra: Int64? = nil, unknownTotal: Bool = false,
                omitContentLength: Bool = false, etag: ETagMode = .normal, ignoreIfRange: Bool = false,
                generation: UInt64? = nil, statusForRangeRequests: Int? = nil,
                contentEncodingOnRange: String? = nil, unsatisfiable: UnsatisfiableMode? = nil,
                retryAfter: String? = nil, hold: ResponseHold? = nil) {
        self.bytesPerSecond = bytesPerSecond
        self.dropAfter = dropAfter
        self.stallSeconds = stallSeconds
        self.stallAfter = stallAfter
        self.extraAnnouncedLength = extraAnnouncedLength
        self.ignoreRange = ignoreRange
        self.status = status
        self.rangeBodyExtra = rangeBodyExtra
        self.unknownTotal = unknownTotal
        self.omitContentLength = omitContentLength
        self.etag = etag
        self.ignoreIfRange = ignoreIfRange
        self.generation = generation
        self.statusForRangeRequests = statusForRangeRequests
        self.contentEncodingOnRange = contentEncodingOnRange
        self.unsatisfiable = unsatisfiable
        self.retryAfter = retryAfter
        self.hold = hold
    }

    /// Faults from query parameters. Unknown or malformed parameters are ignored.
    ///
    /// - `rate=BYTES_PER_SECOND`: ``bytesPerSecond``
    /// - `drop=BYTES`: ``dropAfter``
    /// - `stall=SECONDS`, `stallAfter=BYTES`: ``stallSeconds``, ``stallAfter``
    /// - `lie=EXTRA_BYTES`: ``extraAnnouncedLength``
    /// - `ignoreRange=1`: ``ignoreRange``
    /// - `status=CODE`: ``status``
    /// - `rangeExtra=BYTES`: ``rangeBodyExtra``
    /// - `unknownTotal=1`: ``unknownTotal``
    /// - `noLength=1`: ``omitContentLength``
    /// - `etag=none|weak|lastModifiedOnly|normal`: ``etag``
    /// - `ignoreIfRange=1`: ``ignoreIfRange``
    /// - `generation=N`: ``generation``
    /// - `rangeStatus=CODE`: ``statusForRangeRequests``
    /// - `rangeEncoding=NAME`: ``contentEncodingOnRange``
    /// - `force416=length|nolength`: ``unsatisfiable``
    /// - `retryAfter=VALUE`: ``retryAfter``, percent-decoded (`+` is a space), so
    ///   `retryAfter=Sun,%2022%20Nov%202026%2010:00:00%20GMT` gives an HTTP-date.
    ///
    /// A flag is on for `1` or `true`.
    public init(query: [String: String]) {
        self.init()
        func flag(_ name: String) -> Bool { query[name].map { $0 == "1" || $0 == "true" } ?? false }
        func statusCode(_ name: String) -> Int? {
            query[name].flatMap { Int($0) }.flatMap { (100...599).contains($0) ? $0 : nil }
        }
        bytesPerSecond = query["rate"].flatMap { Int($0) }.flatMap { $0 > 0 ? $0 : nil }
        dropAfter = query["drop"].flatMap { Int64($0) }.flatMap { $0 >= 0 ? $0 : nil }
        stallSeconds = query["stall"].flatMap { Double($0) }.flatMap { $0 > 0 ? $0 : nil }
        stallAfter = query["stallAfter"].flatMap { Int64($0) }
        extraAnnouncedLength = query["lie"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        ignoreRange = flag("ignoreRange")
        status = statusCode("status")
        rangeBodyExtra = query["rangeExtra"].flatMap { Int64($0) }.flatMap { $0 > 0 ? $0 : nil }
        unknownTotal = flag("unknownTotal")
        omitContentLength = flag("noLength")
        etag = query["etag"].flatMap { ETagMode(rawValue: $0) } ?? .normal
        ignoreIfRange = flag("ignoreIfRange")
        generation = query["generation"].flatMap { UInt64($0) }
        statusForRangeRequests = statusCode("rangeStatus")
        contentEncodingOnRange = query["rangeEncoding"].flatMap { $0.isEmpty ? nil : Self.percentDecoded($0) }
        unsatisfiable = switch query["force416"] {
        case "length": .withLength
        case "nolength": .withoutLength
        default: nil
        }
        retryAfter = query["retryAfter"].flatMap { $0.isEmpty ? nil : Self.percentDecoded($0) }
    }

    /// These faults with every value set in `other` taking its place. A flag set on either side
    /// stays set, and an ``etag`` other than `.normal` wins, so a query adds faults to a route's
    /// but cannot take them away.
    public func overridden(by other: Faults) -> Faults {
        Faults(bytesPerSecond: other.bytesPerSecond ?? bytesPerSecond,
               dropAfter: other.dropAfter ?? dropAfter,
               stallSeconds: other.stallSeconds ?? stallSeconds,
               stallAfter: other.stallAfter ?? stallAfter,
               extraAnnouncedLength: other.extraAnnouncedLength ?? extraAnnouncedLength,
               ignoreRange: other.ignoreRange || ignoreRange,
               status: other.status ?? status,
               rangeBodyExtra: other.rangeBodyExtra ?? rangeBodyExtra,
               unknownTotal: other.unknownTotal || unknownTotal,
               omitContentLength: other.omitContentLength || omitContentLength,
               etag: other.etag == .normal ? etag : other.etag,
               ignoreIfRange: other.ignoreIfRange || ignoreIfRange,
               generation: other.generation ?? generation,
               statusForRangeRequests: other.statusForRangeRequests ?? statusForRangeRequests,
               contentEncodingOnRange: other.contentEncodingOnRange ?? contentEncodingOnRange,
               unsatisfiable: other.unsatisfiable ?? unsatisfiable,
               retryAfter: other.retryAfter ?? retryAfter,
               hold: other.hold ?? hold)
    }

    /// `text` with `%XX` escapes decoded and `+` read as a space; a malformed escape stays as it is.
    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), input.count >= 2,
                      let high = hexValue(input[input.startIndex]),
                      let low = hexValue(input[input.startIndex + 1]) {
                bytes.append(high << 4 | low)
                input = input.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
