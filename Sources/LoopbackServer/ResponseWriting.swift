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

    func record(status: Int) -> RequestRecord {
        RequestRecord(method: head.method.rawValue, target: head.uri, range: head.headers.first(name: "Range"),
                      ifRange: head.headers.first(name: "If-Range"), status: status)
    }
}

/// Writes response parts straight into the channel and waits until each is handed to the socket.
///
/// The async channel's own writer only queues; a fault that closes the connection right after a
/// write would then lose bytes the test expects the client to have had, and a stall would keep
/// them from the client.
struct ResponseChannel {
    let channel: any Channel

    func write(_ part: HTTPServerResponsePart) async throws {
        try await channel.writeAndFlush(part).get()
    }

    /// Writes a complete short response with a text body.
    func writeSimple(_ status: HTTPResponseStatus, _ text: String, keepAlive: Bool,
                     extraHeaders: [(String, String)] = []) async throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Length", value: String(text.utf8.count))
        headers.add(name: "Content-Type", value: "text/plain; charset=utf-8")
        for (name, value) in extraHeaders { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        try await write(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers)))
        if !text.isEmpty { try await write(.body(.byteBuffer(ByteBuffer(string: text)))) }
        try await write(.end(nil))
    }
}
