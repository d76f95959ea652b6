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
    /// The upload's source file changed size while it was being sent.
    case sourceChanged(path: String)
    /// No space left on the device holding the partial data or the destination (`ENOSPC`, `EDQUOT`).
    case diskFull(path: String)
    /// Another local file error.
    case fileSystem(path: String, reason: String)
    /// The server answered with a status that is not success.
    case httpStatus(Int)
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
    /// Transient: connection failures and losses, request timeouts, `408`, `429`, `5xx`, responses
    /// that contradict the request, and a full disk (space can be freed; the resource deadline bounds
    /// the retries). Everything else is permanent.
    public var isTransient: Bool {
        switch self {
        case .connectionFailed, .connectionLost, .requestTimedOut, .invalidResponse, .diskFull:
            return true
        case .httpStatus(let status):
            return status == 408 || status == 429 || (500...599).contains(status)
        case .invalidURL, .unsupportedScheme, .destinationOutsideAppFolder, .destinationUnusable,
             .sourceUnreadable, .sourceChanged, .fileSystem, .resourceTimedOut:
            return false
        }
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
        }
    }

    public var description: String {
        switch self {
        case .invalidURL(let url): return "'\(url)' is not a valid URL"
        case .unsupportedScheme(let scheme): return "scheme '\(scheme)' is not supported (only http and https)"
        case .destinationOutsideAppFolder(let path): return "destination '\(path)' is outside the app's folder"
        case .destinationUnusable(let path, let reason): return "destination '\(path)' cannot be used: \(reason)"
        case .sourceUnreadable(let path, let reason): return "cannot read '\(path)': \(reason)"
        case .sourceChanged(let path): return "'\(path)' changed size while it was being sent"
        case .diskFull(let path): return "no space left on the device writing '\(path)'"
        case .fileSystem(let path, let reason): return "'\(path)': \(reason)"
        case .httpStatus(let status): return "the server answered HTTP \(status)"
        case .connectionFailed(let reason): return "could not connect: \(reason)"
        case .connectionLost(let reason): return "connection lost: \(reason)"
        case .requestTimedOut(let seconds): return "no progress for \(Self.format(seconds)) s"
        case .resourceTimedOut: return "the transfer's resource timeout passed"
        case .invalidResponse(let reason): return "unexpected response: \(reason)"
        }
    }

    private static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
