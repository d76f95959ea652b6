import FoundationEssentials

/// The redirects one attempt has followed, and the rule for the next (RFC 9110 §15.4).
///
/// The method rule: `303 See Other` is followed with a `GET` and no body (§15.4.4: the server
/// has taken the request and points at a result); `301`, `302`, `307` and `308` repeat the same
/// method with the same body. For `301`/`302` §15.4.2–3 allow a user agent to turn `POST` into
/// `GET`, but for a background upload that would drop the upload, so the body is sent again.
public struct RedirectTrail: Hashable, Sendable {
    /// The most redirects one attempt follows (§15.4 leaves the number to the client).
    public static let maximumHops = 10

    /// The URLs requested so far, with the method used, first to last.
    public private(set) var visited: [Visit]

    public struct Visit: Hashable, Sendable {
        public var url: String
        public var method: String
    }

    public init(url: String, method: String) {
        visited = [Visit(url: url, method: method)]
    }

    /// The URL and method of the current request.
    public var current: Visit { visited[visited.count - 1] }

    /// The next request after a redirect `status` to `location`.
    public struct Hop: Hashable, Sendable {
        public var url: String
        public var method: String
        /// Whether the request body (an upload's file) is sent again.
        public var sendsBody: Bool

        public init(url: String, method: String, sendsBody: Bool) {
            self.url = url
            self.method = method
            self.sendsBody = sendsBody
        }
    }

    /// Follows `location` (relative references resolve against the current URL, §10.2.2); fails
    /// for a loop, too many hops, or a target that is not `http`/`https`. Failures are permanent.
    public mutating func follow(status: Int, location: String) -> Result<Hop, TransferFailure> {
        guard visited.count <= Self.maximumHops else {
            return .failure(.redirectLoop("more than \(Self.maximumHops) redirects"))
        }
        guard let base = URL(string: current.url), let resolved = URL(string: location, relativeTo: base)?.absoluteURL,
              let scheme = resolved.scheme?.lowercased(), let host = resolved.host, !host.isEmpty else {
            return .failure(.invalidResponse("a \(status) to '\(location)', which is not a URL"))
        }
        guard scheme == "http" || scheme == "https" else {
            return .failure(.unsupportedScheme(scheme))
        }
        // The fragment is never sent (§7.1); it must not make two requests look different.
        var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false)
        components?.fragment = nil
        let url = components?.string ?? resolved.absoluteString
        let method = status == 303 && current.method != "HEAD" ? "GET" : current.method
        let hop = Hop(url: url, method: method, sendsBody: method == current.method && method != "GET" && method != "HEAD")
        // §15.4: a cycle is a request repeated exactly; it cannot end.
        if visited.contains(Visit(url: url, method: method)) {
            // Said without the URL's credentials: the message is shown and logged.
            var shown = URLComponents(string: url)
            shown?.user = nil
            shown?.password = nil
            return .failure(.redirectLoop("\(shown?.string ?? url) redirects back to itself"))
        }
        visited.append(Visit(url: url, method: method))
        return .success(hop)
    }
}
