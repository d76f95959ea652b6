import FoundationEssentials

/// One push source an app's manifest names (`"push": [{"ntfy": "https://host/topic"}]`): the
/// scheduler keeps the topic's JSON stream open and turns each message whose body is a JSON
/// object into a push for the app.
public struct PushSubscription: Codable, Hashable, Sendable {
    /// The topic URL (`http` or `https`); the stream is `GET <topic>/json`.
    public var ntfy: String
    /// A file holding the `Authorization` header's value (`Bearer tk_...` or `Basic ...`), read
    /// when connecting. It must be the user's own and closed to others, like the manifest.
    public var authorizationFile: String?

    public init(ntfy: String, authorizationFile: String? = nil) {
        self.ntfy = ntfy
        self.authorizationFile = authorizationFile
    }

    /// Why the subscription cannot be used, or `nil`.
    public var problem: String? {
        // Said without the URL's credentials: the line is shown and logged.
        let shown = URLText.hidingCredentials(ntfy)
        guard let url = URLComponents(string: ntfy), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https" else {
            return "push subscription '\(shown)' is not an http or https URL"
        }
        guard let host = url.host, !host.isEmpty else { return "push subscription '\(shown)' has no host" }
        guard url.query == nil, url.fragment == nil else {
            return "push subscription '\(shown)' must be a topic URL without '?' or '#'"
        }
        let topic = url.path.split(separator: "/").last.map(String.init) ?? ""
        guard !topic.isEmpty else { return "push subscription '\(shown)' names no topic (https://host/topic)" }
        if ntfy.utf8.count > 2048 { return "push subscription URL is longer than 2048 bytes" }
        if let file = authorizationFile, !file.hasPrefix("/") {
            return "authorizationFile '\(file)' must be an absolute path"
        }
        return nil
    }

    /// The stream's URL, resuming after `since` (a message id) when given.
    public func streamURL(since: String?) -> String {
        var base = ntfy
        while base.hasSuffix("/") { base.removeLast() }
        guard let since else { return "\(base)/json" }
        return "\(base)/json?since=\(Self.percentEncoded(since))"
    }

    /// Every byte but ASCII letters and digits as `%XX` (RFC 3986 §2.1): a query value that
    /// cannot end the query or start another parameter, whatever the server sent as an id.
    static func percentEncoded(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                result += String(printf: "%%%02X", UInt32(byte))
            }
        }
        return result
    }
}

/// What the scheduler's subscribers last knew of an app's push subscriptions:
/// `subscriptions/<app>.json`.
public struct SubscriptionStatus: Codable, Hashable, Sendable {
    public struct Stream: Codable, Hashable, Sendable {
        public enum State: String, Codable, Sendable {
            case connecting, connected
            /// The last attempt failed; the next waits for `nextAttemptAt`.
            case failing
        }

        public var url: String
        public var state: State
        /// The id of the last message made into a push (made durable in the inbox first): the
        /// stream resumes after it (`since=`).
        public var lastMessageID: String?
        public var lastMessageAt: Date?
        public var connectedAt: Date?
        public var lastError: String?
        public var lastErrorAt: Date?
        /// Failed attempts in a row.
        public var failures: Int
        public var nextAttemptAt: Date?

        public init(url: String, state: State = .connecting, lastMessageID: String? = nil, lastMessageAt: Date? = nil,
                    connectedAt: Date? = nil, lastError: String? = nil, lastErrorAt: Date? = nil, failures: Int = 0,
                    nextAttemptAt: Date? = nil) {
            self.url = url
            self.state = state
            self.lastMessageID = lastMessageID
            self.lastMessageAt = lastMessageAt
            self.connectedAt = connectedAt
            self.lastError = lastError
            self.lastErrorAt = lastErrorAt
            self.failures = failures
            self.nextAttemptAt = nextAttemptAt
        }
    }

    public var app: Identifier
    public var streams: [Stream]

    public init(app: Identifier, streams: [Stream]) {
        self.app = app
        self.streams = streams
    }
}
