import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The service manager's notification socket, as sd_notify(3) documents it: each message is one
/// datagram of `KEY=VALUE` lines sent to the AF_UNIX socket named by `$NOTIFY_SOCKET`, a path, or
/// an abstract name when it starts with `@`.
///
/// The protocol is that one datagram, so it is written here rather than linking libsystemd.
public final class NotifySocket {
    /// Why `$NOTIFY_SOCKET` names nothing this process can send to.
    public enum AddressError: Error, CustomStringConvertible {
        /// Neither a path nor `@name` (systemd's `vsock:` addresses are not supported).
        case unsupported(String)
        /// Longer than an AF_UNIX address holds.
        case tooLong(String)
        /// socket(2) failed.
        case socket(Int32)

        public var description: String {
            switch self {
            case .unsupported(let name): return "NOTIFY_SOCKET '\(name)' is neither an absolute path nor an @abstract name"
            case .tooLong(let name): return "NOTIFY_SOCKET '\(name)' is longer than a socket address can be"
            case .socket(let code): return "cannot create a socket for NOTIFY_SOCKET: \(String(cString: strerror(code)))"
            }
        }
    }

    /// The value of `$NOTIFY_SOCKET` this socket sends to.
    public let name: String
    private let descriptor: Int32
    private var address: sockaddr_un
    private let addressLength: socklen_t

    /// A datagram socket for `name` (not connected: the manager may create its socket later, or
    /// again after a restart of its own; each send is addressed).
    public init(name: String) throws(AddressError) {
        self.name = name
        let abstract = name.hasPrefix("@")
        guard abstract || name.hasPrefix("/") else { throw .unsupported(name) }
        var bytes = Array(name.utf8)
        // An abstract name is the same bytes after a leading NUL instead of the `@`, and its
        // length is exact: no terminating NUL belongs to it.
        if abstract { bytes[0] = 0 }
        var address = sockaddr_un()
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity, bytes.count > 1 else { throw .tooLong(name) }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (index, byte) in bytes.enumerated() { path[index] = byte }
        }
        self.address = address
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2
        addressLength = socklen_t(pathOffset + bytes.count + (abstract ? 0 : 1))
        // Close-on-exec: the apps the scheduler launches must not hold the manager's socket.
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw .socket(errno) }
    }

    deinit {
        close(descriptor)
    }

    /// Sends one message; returns 0, or the errno of a send that failed (no listener, a full
    /// queue). Never blocks: a manager that does not read must not stall the scheduler.
    @discardableResult
    public func send(_ message: String) -> Int32 {
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bytes.withUnsafeBytes { buffer in
                    sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), socketAddress, addressLength)
                }
            }
        }
        return sent < 0 ? errno : 0
    }
}
