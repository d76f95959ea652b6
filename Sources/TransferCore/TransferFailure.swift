/// Why one attempt of a transfer ended without the bytes arriving.
///
/// ``isTransient`` tells the scheduler whether trying again later can help: it retries transient
/// failures with backoff until the resource deadline, and records permanent ones as final.
public enum TransferFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The URL does not parse or has no host.
    case invalidURL(String)
    /// Only `http` and `https` are carried.
    case unsupportedScheme(String)
    /// The download's destination resolves outside the app's folder.
    case destinationOutsideAppFolder(String)
    /// The download's destination cannot be used (not a regular file, folder missing or unwritable).
    case destinationUnusable(path: String, reason: String)
    /// The upload's source file cannot be read.
    case sourceUnreadable(path: String, reason: String)
    /// The upload's source file changed (size, modification time, inode or change time) while it
    /// was being sent: what the server got may be torn, so it is sent again later.
    case sourceChanged(path: String)
    /// No space left on the device holding the partial data or the destination (`ENOSPC`, `EDQUOT`).
    case diskFull(path: String)
    /// Another local file error.
    case fileSystem(path: String, reason: String)
    /// The server answered with a status that is not success, and how long it asked the client to
    /// wait (`Retry-After`, in seconds) if it did.
    case httpStatus(Int, retryAfter: Double? = nil)
    /// Redirects that cannot end: a cycle, or more than ``RedirectTrail/maximumHops``.
    case redirectLoop(String)
    /// The finished download's SHA-256 is not the one the app asked for.
    case checksumMismatch(expected: String, actual: String)
    /// No connection could be made (refused, unreachable, name not resolved, TLS refused).
    case connectionFailed(String)
    /// The connection ended before the whole body arrived (dropped, reset, or shorter than
    /// `Content-Length`).
    case connectionLost(String)
    /// Nothing moved for `timeoutIntervalForRequest` seconds.
    case requestTimedOut(seconds: Double)
    /// The resource deadline (`timeoutIntervalForResource`) passed.
    case resourceTimedOut
    /// The server's answer contradicts the request (e.g. a `206` for another range).
    case invalidResponse(String)

    /// Whether another attempt later may succeed.
    ///
    /// Transient: connection failures and losses, request timeouts, the statuses
    /// ``StatusRules/isTransient(_:)`` names, responses that contradict the request, a source file
    /// that changed while it was sent, and a full disk (space can be freed; the resource deadline
    /// bounds the retries). Everything else is permanent and ends the transfer at once.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .connectionLost, .requestTimedOut, .invalidResponse, .diskFull, .sourceChanged:
            return true
        case .httpStatus(let status, _):
            return StatusRules.isTransient(status)
        case .invalidURL, .unsupportedScheme, .destinationOutsideAppFolder, .destinationUnusable,
             .sourceUnreadable, .fileSystem, .resourceTimedOut, .redirectLoop, .checksumMismatch:
            return false
        }
    }

    /// The server's `Retry-After`, in seconds, when the failure carries one.
    public var retryAfter: Double? {
        if case .httpStatus(_, let retryAfter) = self { return retryAfter }
        return nil
    }

    /// A short stable name for logs and `--json` output.
    public var name: String {
        switch self {
        case .invalidURL: return "invalidURL"
        case .unsupportedScheme: return "unsupportedScheme"
        case .destinationOutsideAppFolder: return "destinationOutsideAppFolder"
        case .destinationUnusable: return "destinationUnusable"
        case .sourceUnreadable: return "sourceUnreadable"
        case .sourceChanged: return "sourceChanged"
        case .diskFull: return "diskFull"
        case .fileSystem: return "fileSystem"
        case .httpStatus: return "httpStatus"
        case .connectionFailed: return "connectionFailed"
        case .connectionLost: return "connectionLost"
        case .requestTimedOut: return "requestTimedOut"
        case .resourceTimedOut: return "resourceTimedOut"
        case .invalidResponse: return "invalidResponse"
        case .redirectLoop: return "redirectLoop"
        case .checksumMismatch: return "checksumMismatch"
        }
    }

    public var description: String {
        switch self {
        case .invalidURL(let url): return "'\(url)' is not a valid URL"
        case .unsupportedScheme(let scheme): return "scheme '\(scheme)' is not supported (only http and https)"
        case .destinationOutsideAppFolder(let path): return "destination '\(path)' is outside the app's folder"
        case .destinationUnusable(let path, let reason): return "destination '\(path)' cannot be used: \(reason)"
        case .sourceUnreadable(let path, let reason): return "cannot read '\(path)': \(reason)"
        case .sourceChanged(let path): return "'\(path)' changed while it was being sent"
        case .diskFull(let path): return "no space left on the device writing '\(path)'"
        case .fileSystem(let path, let reason): return "'\(path)': \(reason)"
        case .httpStatus(let status, let retryAfter):
            return "the server answered HTTP \(status)" + (retryAfter.map { " (retry after \(Self.format($0)) s)" } ?? "")
        case .redirectLoop(let reason): return "redirects do not end: \(reason)"
        case .checksumMismatch(let expected, let actual):
            return "the download's SHA-256 is \(actual), not the expected \(expected)"
        case .connectionFailed(let reason): return "could not connect: \(reason)"
        case .connectionLost(let reason): return "connection lost: \(reason)"
        case .requestTimedOut(let seconds): return "no progress for \(Self.format(seconds)) s"
        case .resourceTimedOut: return "the transfer's resource timeout passed"
        case .invalidResponse(let reason): return "unexpected response: \(reason)"
        }
    }

    private static func format(_ seconds: Double) -> String {
        // Int(_:) would trap on NaN, infinities and anything past Int.max.
        seconds.isFinite && seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(seconds)) : String(seconds)
    }
}
