import NIOHTTP1

/// How a `GET` or `HEAD` of an entity is answered, decided from the request and the faults
/// before anything is written.
enum EntityAnswer {
    /// A status with an empty body and these headers (besides the framing ones).
    case empty(HTTPResponseStatus, headers: [(String, String)])
    /// A `200` or `206` carrying the entity's bytes in `body`.
    case entity(EntityBody)

    /// The head and the bytes of a `200` or `206`.
    struct EntityBody {
        let status: HTTPResponseStatus
        let headers: HTTPHeaders
        /// Entity offsets to send; a ``Faults/rangeBodyExtra`` takes it past what `Content-Range` says.
        let range: Range<Int64>
        /// Whether to send each byte XOR 0x5A, so that the body is not the identity bytes its
        /// `Content-Encoding` pretends to encode.
        let scrambled: Bool
        /// Whether the body is close-delimited: it has no `Content-Length`.
        let closeDelimited: Bool
        /// Whether `Content-Length` announces more than ``range`` holds, so the response can only
        /// end by closing the connection.
        let announcesMore: Bool
    }

    init(_ request: ParsedRequest, entity: ServedEntity, faults: Faults) {
        let requestHeaders = request.head.headers
        let rangeHeader = requestHeaders.first(name: "Range")
        let validators = entity.validators(faults.etag) + [("Accept-Ranges", "bytes")]
        if rangeHeader != nil, let code = faults.statusForRangeRequests {
            self = .empty(HTTPResponseStatus(statusCode: code), headers: [])
            return
        }
        if rangeHeader != nil, let mode = faults.unsatisfiable {
            let contentRange = mode == .withLength ? [("Content-Range", "bytes */\(entity.size)")] : []
            self = .empty(.rangeNotSatisfiable, headers: validators + contentRange)
            return
        }
        var range = faults.ignoreRange ? .whole : RequestedRange(rangeHeader, size: entity.size)
        if let ifRange = requestHeaders.first(name: "If-Range"), !faults.ignoreIfRange,
           !entity.matches(ifRange: ifRange, advertising: faults.etag) {
            range = .whole
        }
        let status: HTTPResponseStatus
        let body: Range<Int64>
        var headers = HTTPHeaders(validators)
        headers.add(name: "Content-Type", value: "application/octet-stream")
        var scrambled = false
        switch range {
        case .unsatisfiable:
            self = .empty(.rangeNotSatisfiable, headers: validators + [("Content-Range", "bytes */\(entity.size)")])
            return
        case .whole:
            status = .ok
            body = 0..<entity.size
        case .satisfiable(let requested):
            status = .partialContent
            body = requested.lowerBound..<(requested.upperBound + (faults.rangeBodyExtra ?? 0))
            let total = faults.unknownTotal ? "*" : String(entity.size)
            headers.add(name: "Content-Range", value: "bytes \(requested.lowerBound)-\(requested.upperBound - 1)/\(total)")
            if let encoding = faults.contentEncodingOnRange {
                headers.add(name: "Content-Encoding", value: encoding)
                scrambled = true
            }
        }
        if faults.omitContentLength {
            headers.add(name: "Connection", value: "close")
        } else {
            headers.add(name: "Content-Length", value: String(Int64(body.count) + (faults.extraAnnouncedLength ?? 0)))
            if !request.keepAlive { headers.add(name: "Connection", value: "close") }
        }
        self = .entity(EntityBody(status: status, headers: headers, range: body, scrambled: scrambled,
                                  closeDelimited: faults.omitContentLength,
                                  announcesMore: !faults.omitContentLength && faults.extraAnnouncedLength != nil))
    }
}
