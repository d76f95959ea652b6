import FoundationEssentials

/// The origin of a URL (scheme, host, port; RFC 9110 §4.3.1), the unit a secret header is trusted to.
public struct RequestOrigin: Hashable, Sendable {
    public var scheme: String
    public var host: String
    public var port: Int

    /// `nil` for a URL without a scheme or host.
    public init?(url: String) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              let host = components.host?.lowercased(), !host.isEmpty else { return nil }
        self.scheme = scheme
        self.host = host
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Whether a request to `url` may carry secrets given for `original`: only to the same origin.
    ///
    /// RFC 9110 §15.4: a user agent following a redirect should not forward credentials to another
    /// origin; curl drops them since CVE-2018-1000007, and so does this engine.
    public static func mayCarrySecrets(to url: String, givenFor original: String) -> Bool {
        guard let target = RequestOrigin(url: url), let source = RequestOrigin(url: original) else { return false }
        return target == source
    }
}
