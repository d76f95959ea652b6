import FoundationEssentials

/// An app's answer to `willBeginDelayedRequest`: asked by the scheduler when a transfer with an
/// `earliestBeginDate`, whose app wants to be asked, is about to begin
/// (``TransferRecord/delayedRequestAskedAt``). Sent by the library's session, or by any program
/// with `bgctl transfer answer`.
public struct DelayedRequestAnswer: Hashable, Sendable {
    /// Apple's `URLSession.DelayedRequestDisposition`.
    public enum Disposition: String, Codable, Sendable, CaseIterable {
        /// Begin with the request as it was made.
        case `continue`
        /// Cancel the transfer before any byte goes out.
        case cancel
        /// Begin with a changed request: ``DelayedRequestAnswer/url`` and/or ``DelayedRequestAnswer/headers``.
        case new
    }

    public var app: Identifier
    public var identifier: Identifier
    public var disposition: Disposition
    /// `new`: the URL to use instead; `nil` keeps the transfer's URL.
    public var url: String?
    /// `new`: the header fields that replace the transfer's (an empty list removes them all);
    /// `nil` keeps them.
    public var headers: [TransferHeader]?
    /// `new`: names of headers that are secrets besides `Authorization`, `Proxy-Authorization`
    /// and `Cookie`, added to the transfer's.
    public var secretHeaderNames: [String]?

    public init(app: Identifier, identifier: Identifier, disposition: Disposition, url: String? = nil,
                headers: [TransferHeader]? = nil, secretHeaderNames: [String]? = nil) {
        self.app = app
        self.identifier = identifier
        self.disposition = disposition
        self.url = url
        self.headers = headers
        self.secretHeaderNames = secretHeaderNames
    }
}

/// How the question before a delayed transfer's begin ended (``TransferRecord/delayedRequestOutcome``).
public enum DelayedRequestOutcome: String, Codable, Sendable, CaseIterable {
    /// The app said to begin as made.
    case continued
    /// The app changed the request (URL, headers or both).
    case changed
    /// The app cancelled the transfer.
    case cancelled
    /// No answer came within `delayedRequestAnswerSeconds`: it began as made.
    case timedOut
}
