import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import NIOPosix
import TransferCore
#if canImport(Glibc)
import Glibc
#endif

extension TransferFailure {
    /// The failure an error thrown by the HTTP client or by the attempt's own file work stands for.
    public init(classifying error: any Error) {
        if let failure = error as? TransferFailure {
            self = failure
            return
        }
        if let error = error as? HTTPClientError {
            switch error {
            case .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                self = .connectionFailed("timed out connecting")
            case .invalidURL, .emptyHost, .emptyScheme:
                self = .invalidURL("\(error)")
            case .remoteConnectionClosed, .bodyLengthMismatch:
                self = .connectionLost("the server closed the connection early")
            case .readTimeout, .writeTimeout:
                self = .connectionLost("the connection timed out")
            case .redirectLimitReached, .redirectCycleDetected:
                self = .redirectLoop("\(error)")
            default:
                self = .connectionLost("\(error)")
            }
            return
        }
        if let error = error as? IOError {
            self = Self.classify(errno: error.errnoCode, "\(error)")
            return
        }
        if error is NIOConnectionError {
            self = .connectionFailed(Self.connectionFailureReason(error))
            return
        }
        if let error = error as? ChannelError {
            switch error {
            case .connectTimeout: self = .connectionFailed("timed out connecting")
            default: self = .connectionLost("\(error)")
            }
            return
        }
        if error is HTTPParserError {
            // A body cut short of its Content-Length ends as a parser error at end of stream.
            self = .connectionLost("the response ended early or was malformed (\(error))")
            return
        }
        if error is SocketAddressError {
            self = .connectionFailed("the host name does not resolve")
            return
        }
        self = .connectionLost(String(describing: error))
    }

    private static func classify(errno code: Int32, _ text: String) -> TransferFailure {
        switch code {
        case ECONNREFUSED: return .connectionFailed("connection refused")
        case ENETUNREACH, EHOSTUNREACH: return .connectionFailed("network unreachable")
        case ETIMEDOUT: return .connectionFailed("timed out connecting")
        case ECONNRESET: return .connectionLost("connection reset by the server")
        case EPIPE: return .connectionLost("the server stopped reading")
        default: return .connectionLost(text)
        }
    }

    private static func connectionFailureReason(_ error: any Error) -> String {
        guard let error = error as? NIOConnectionError else { return "\(error)" }
        if let first = error.connectionErrors.first?.error as? IOError {
            if case .connectionFailed(let reason) = classify(errno: first.errnoCode, "\(first)") { return reason }
        }
        if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name does not resolve" }
        return "\(error)"
    }
}
