import Foundation
import LoopbackServer
#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` against a server with `routes`, and shuts the server down however `body` ends.
func withLoopback(_ routes: [String: Route] = [:], _ body: (LoopbackServer) async throws -> Void) async throws {
    let server = try await LoopbackServer.start(routes: routes)
    do {
        try await body(server)
    } catch {
        await server.shutdown()
        throw error
    }
    await server.shutdown()
}

/// A response exactly as it came off the wire, for checking what the server sent (the transfer
/// engine's client would tidy it up or refuse it).
struct RawResponse: Sendable {
    /// The status line without its CRLF, e.g. `HTTP/1.1 206 Partial Content`.
    var statusLine: String
    /// Header fields in the order sent.
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Whether the server closed the connection: read to the close for a body without
    /// `Content-Length`, or before the announced length arrived.
    var closed: Bool

    var status: Int { statusLine.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0 }

    /// The first value of the header `name`, whatever its case.
    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The header names sent, lowercased, in order.
    var headerNames: [String] { headers.map { $0.name.lowercased() } }
}

struct RawClientError: Error, CustomStringConvertible {
    var description: String
}

/// Sends one HTTP/1.1 request on a new connection to 127.0.0.1:`port` and reads the response:
/// the head, then the body up to its `Content-Length` or, without one, up to the close (no body
/// for `HEAD`, 1xx, 204 and 304). A PUT or POST announces its body's length.
///
/// Blocking socket calls, on a thread of its own: Dispatch's queues and the cooperative pool
/// share a few threads, and tests waiting in `recv` there would hold up the very servers they
/// wait for (and every other test) until Dispatch notices and adds threads, seconds later. A
/// read waits at most 10 s.
func rawRequest(port: Int, _ method: String, _ target: String, headers: [(String, String)] = [],
                body: [UInt8] = []) async throws -> RawResponse {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try rawRequestBlocking(port: port, method, target, headers: headers, body: body) })
        }
        thread.start()
    }
}

/// A `GET` of `target`, as ``rawRequest(port:_:_:headers:body:)``.
func rawRequest(port: Int, _ target: String, headers: [(String, String)] = []) async throws -> RawResponse {
    try await rawRequest(port: port, "GET", target, headers: headers)
}

private func rawRequestBlocking(port: Int, _ method: String, _ target: String, headers: [(String, String)],
                                body: [UInt8]) throws -> RawResponse {
    let socket = try connectLoopback(port: port)
    defer { _ = close(socket) }
    var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
    for (name, value) in headers { request += "\(name): \(value)\r\n" }
    if !body.isEmpty || method == "PUT" || method == "POST" { request += "Content-Length: \(body.count)\r\n" }
    request += "\r\n"
    try sendAll(socket, Array(request.utf8) + body)

    var received: [UInt8] = []
    var closed = false
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    var headEnd: Int?
    while headEnd == nil {
        guard try receive(socket, into: &received) else { throw RawClientError(description: "closed before the head ended") }
        headEnd = firstIndex(of: separator, in: received)
    }
    let headText = String(decoding: received[..<headEnd!], as: UTF8.self)
    var lines = headText.components(separatedBy: "\r\n")
    let statusLine = lines.removeFirst()
    let fields = lines.map { line -> (name: String, value: String) in
        let colon = line.firstIndex(of: ":") ?? line.endIndex
        let value = line[colon...].dropFirst().trimmingCharacters(in: .whitespaces)
        return (String(line[..<colon]), value)
    }
    var response = RawResponse(statusLine: statusLine, headers: fields, body: Array(received[(headEnd! + 4)...]),
                               closed: false)
    let status = response.status
    let bodyless = method == "HEAD" || (100..<200).contains(status) || status == 204 || status == 304
    let length = bodyless ? 0 : response.header("Content-Length").flatMap { Int($0) }
    while length.map({ response.body.count < $0 }) ?? true {
        guard try receive(socket, into: &response.body) else {
            closed = true
            break
        }
    }
    response.closed = closed
    return response
}

private func connectLoopback(port: Int) throws -> Int32 {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { throw RawClientError(description: "socket: errno \(errno)") }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard result == 0 else {
        _ = close(socket)
        throw RawClientError(description: "connect: errno \(errno)")
    }
    return socket
}

private func sendAll(_ socket: Int32, _ bytes: [UInt8]) throws {
    var sent = 0
    while sent < bytes.count {
        let result = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { throw RawClientError(description: "send: errno \(errno)") }
        sent += result
    }
}

/// Appends what arrives next; `false` once the peer has closed.
private func receive(_ socket: Int32, into bytes: inout [UInt8]) throws -> Bool {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let result = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress!, $0.count, 0) }
        if result < 0 && errno == EINTR { continue }
        // A reset ends the connection as a close does, as far as what arrived goes.
        if result == 0 || (result < 0 && errno == ECONNRESET) { return false }
        if result < 0 { throw RawClientError(description: "recv: errno \(errno) (a timeout is EAGAIN)") }
        bytes.append(contentsOf: buffer[..<result])
        return true
    }
}

private func firstIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
    guard haystack.count >= needle.count else { return nil }
    for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
        return start
    }
    return nil
}
