import Foundation

/// The configuration of a background session, as `URLSessionConfiguration.background(withIdentifier:)`.
public struct BGURLSessionConfiguration: Sendable, Hashable {
    /// Names the session; the app is woken with it when transfers end (`.urlSession(identifier)`).
    /// Letters, digits, `.`, `-`, `_`.
    public let identifier: String
    /// Wait for external power (and a network) before moving bytes. Transfers an app starts while
    /// it runs for a background task are discretionary whatever this says.
    public var isDiscretionary = false
    /// Whether transfers may move bytes over a metered network (the scheduler's `expensive`
    /// condition). `nil`, the default: yes, unless the transfer is discretionary (Apple's
    /// background sessions keep those off expensive networks).
    public var allowsExpensiveNetworkAccess: Bool?
    /// Launch the app when a transfer of this session ends and no process of the app runs.
    public var sessionSendsLaunchEvents = true
    /// Seconds without progress before an attempt fails and is retried.
    public var timeoutIntervalForRequest: TimeInterval = 60
    /// Seconds before a transfer gives up for good.
    public var timeoutIntervalForResource: TimeInterval = 7 * 86_400
    /// Header names (any case) whose values are secrets besides `Authorization`,
    /// `Proxy-Authorization` and `Cookie`: never shown (`redacted`), and not sent after a redirect
    /// to another origin. Not in Apple's configuration.
    public var secretHTTPHeaderNames: [String] = []

    /// A configuration for a background session named `identifier`.
    public static func background(withIdentifier identifier: String) -> BGURLSessionConfiguration {
        BGURLSessionConfiguration(identifier: identifier)
    }

    init(identifier: String) {
        self.identifier = identifier
    }
}

/// How a transfer of a background session ended without its bytes arriving.
public struct BGURLSessionError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The transfer failed for good (an HTTP error, its resource timeout, a file problem).
        case failed
        /// The app, a person, or switching the app off cancelled it.
        case cancelled
        /// The scheduler refused to take it (see the message).
        case refused
    }

    public let code: Code
    /// The scheduler's words.
    public let message: String

    public var description: String { message }
}

/// What a background session tells its delegate, in order: on the session's own thread, or,
/// during ``BGURLSession/deliverPendingEvents()``, on the thread that called it. Every method has
/// an empty default.
public protocol BGURLSessionDelegate: AnyObject, Sendable {
    /// Bytes of a download arrived. `totalBytesExpectedToWrite` is -1 when unknown.
    func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didWriteData bytesWritten: Int64,
                    totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)
    /// Bytes of an upload were sent.
    func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didSendBodyData bytesSent: Int64,
                    totalBytesSent: Int64, totalBytesExpectedToSend: Int64)
    /// A download is complete: the file is at `location`, in the app's downloads folder. Unlike
    /// on Apple's systems the file stays there after this returns; move it where it belongs.
    func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didFinishDownloadingTo location: URL)
    /// A transfer ended: `error` is `nil` when it succeeded, else a ``BGURLSessionError``.
    func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didCompleteWithError error: (any Error)?)
    /// Every event waiting for the session when the app was launched for it has been delivered.
    func urlSessionDidFinishEvents(forBackgroundURLSession session: BGURLSession)
}

extension BGURLSessionDelegate {
    public func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didWriteData bytesWritten: Int64,
                           totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64) {}
    public func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didSendBodyData bytesSent: Int64,
                           totalBytesSent: Int64, totalBytesExpectedToSend: Int64) {}
    public func urlSession(_ session: BGURLSession, downloadTask: BGURLSessionTask, didFinishDownloadingTo location: URL) {}
    public func urlSession(_ session: BGURLSession, task: BGURLSessionTask, didCompleteWithError error: (any Error)?) {}
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: BGURLSession) {}
}
