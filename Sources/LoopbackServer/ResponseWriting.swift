import NIOCore
import NIOHTTP1

/// The parts of a request the server acts on.
struct ParsedRequest {
    let head: HTTPRequestHead
    let path: String
    let query: [String: String]

    init(_ head: HTTPRequestHead) {
        self.head = head
        let parts = head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        path = String(parts.first ?? "/")
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let keyValue = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[String(keyValue[0])] = keyValue.count == 2 ? String(keyValue[1]) : ""
            }
        }
        self.query = query
    }

    var keepAlive: Bool { head.isKeepAlive }

    var isHead: Bool { head.method == .HEAD }

    func record(status: Int) -> RequestRecord {
        var record = RequestRecord(method: head.method.rawValue, target: head.uri, range: head.headers.first(name: "Range"),
                                   ifRange: head.headers.first(name: "If-Range"), status: status,
                                   acceptEncoding: head.headers.first(name: "Accept-Encoding"))
        record.headers = head.headers.map { RequestRecord.Field(name: $0.name, value: $0.value) }
        return record
    }

    /// The record of an upload request whose body, as far as it came, was `bodyBytes` long.
    func record(status: Int, bodyBytes: Int64, sha256: String) -> RequestRecord {
        var record = record(status: status)
        record.bodyBytes = bodyBytes
        record.sha256 = sha256
        return record
    }
}

/// Writes response parts straight into the channel and waits until each is handed to the socket.
///
/// The async channel's own writer only queues; a fault that closes the connection right after a
/// write would then lose bytes the test expects the client to have had, and a stall would keep
/// them from the client.
///
/// The encoder does not add framing headers (see ``LoopbackServer/start(routes:)``): every
/// response sets its own `Content-Length`, or none when a fault wants the body close-delimited.
struct ResponseChannel {
    let channel: any Channel

    func write(_ part: HTTPServerResponsePart) async throws {
        try await channel.writeAndFlush(part).get()
    }

    /// Writes a complete short response to `request` with a text body (none for `HEAD`, nor for
    /// a status that cannot have one).
    func writeSimple(_ status: HTTPResponseStatus, _ text: String, to request: ParsedRequest,
                     extraHeaders: [(String, String)] = []) async throws {
        var headers = HTTPHeaders()
        let hasBody = status.mayHaveResponseBody
        if hasBody {
            headers.add(name: "Content-Length", value: String(text.utf8.count))
            if !text.isEmpty { headers.add(name: "Content-Type", value: "text/plain; charset=utf-8") }
        }
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        if !request.keepAlive { headers.add(name: "Connection", value: "close") }
        try await write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        if hasBody && !text.isEmpty && !request.isHead { try await write(.body(.byteBuffer(ByteBuffer(string: text)))) }
        try await write(.end(nil))
    }

    /// Writes the answer of an injected ``Faults/status``: a short text body, and the fault's
    /// ``Faults/retryAfter`` if any.
    func writeInjected(status: Int, faults: Faults, to request: ParsedRequest) async throws {
        try await writeSimple(HTTPResponseStatus(statusCode: status), "injected status \(status)\n", to: request,
                              extraHeaders: faults.retryAfter.map { [("Retry-After", $0)] } ?? [])
    }

    /// Writes a redirect to `location`, verbatim, with an empty body.
    func writeRedirect(status: Int, location: String, to request: ParsedRequest) async throws {
        try await writeSimple(HTTPResponseStatus(statusCode: status), "", to: request,
                              extraHeaders: [("Location", location)])
    }
}
