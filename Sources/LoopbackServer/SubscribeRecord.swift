/// One subscribe request (`GET /<topic>/json`) as the server saw it, for tests to check what a
/// client sent when it (re)connected.
public struct SubscribeRecord: Hashable, Sendable {
    /// The topic asked for.
    public var topic: String
    /// The `since` query parameter, as sent (`nil` without one).
    public var since: String?
    /// The `Authorization` header, as sent.
    public var authorization: String?
    /// The status answered.
    public var status: Int
}
