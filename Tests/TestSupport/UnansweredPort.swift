#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP port that never answers HTTP, in one of the two ways a real host fails to:
///
/// - ``refusing()``: a socket bound to the port and not listening, so the kernel answers every
///   connection attempt with a reset at once (`ECONNREFUSED`), and no other program can take the
///   port while the test runs.
/// - ``silent()``: a listening socket whose accept queue (backlog 0) is already full with one
///   connection of its own that it never accepts, so the kernel drops every further SYN and a
///   client's connect neither succeeds nor fails until the client gives up (as with a host that
///   drops packets).
///
/// ``close()`` releases every socket; it must be called (no deinit work).
public final class UnansweredPort: @unchecked Sendable {
    public let port: Int
    private var sockets: [Int32]

    private init(port: Int, sockets: [Int32]) {
        self.port = port
        self.sockets = sockets
    }

    /// An `http://127.0.0.1:PORT` URL with `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// A port whose connections are refused.
    public static func refusing() throws -> UnansweredPort {
        let fd = try boundSocket()
        return UnansweredPort(port: try localPort(of: fd), sockets: [fd])
    }

    /// A port whose connections are never answered.
    public static func silent() throws -> UnansweredPort {
        let listener = try boundSocket()
        guard listen(listener, 0) == 0 else { throw failure("listen", closing: [listener]) }
        let port = try localPort(of: listener)
        // Loopback completes this handshake in connect itself; the connection then sits in the
        // accept queue, which with backlog 0 makes the queue full.
        let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard filler >= 0 else { throw failure("socket", closing: [listener]) }
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw failure("connect", closing: [listener, filler]) }
        return UnansweredPort(port: port, sockets: [listener, filler])
    }

    public func close() {
        for fd in sockets { _ = Glibc.close(fd) }
        sockets = []
    }

    private static func boundSocket() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw failure("socket", closing: []) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw failure("bind", closing: [fd]) }
        return fd
    }

    private static func localPort(of fd: Int32) throws -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw failure("getsockname", closing: [fd]) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }

    private static func failure(_ call: String, closing fds: [Int32]) -> TestFailure {
        let text = String(cString: strerror(errno))
        for fd in fds { _ = Glibc.close(fd) }
        return TestFailure("\(call) for an unanswered loopback port: \(text)")
    }
}
