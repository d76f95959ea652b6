import FoundationEssentials

/// One machine of `bgtop --host`, as the header shows it: its name and how its connection stands.
public struct HostBadge: Sendable, Hashable {
    /// How the connection to a host stands.
    public enum Connection: Sendable, Hashable {
        /// ssh has been started; the feed's first line has not arrived yet.
        case connecting
        /// The feed is live.
        case connected
        /// The connection ended (`reason`: ssh's last words, or what broke the feed); the next
        /// attempt is at `retryAt`.
        case lost(reason: String, retryAt: Date)
    }

    /// `USER@HOST`, as given to `--host`.
    public var name: String
    public var connection: Connection
    /// The host the screen shows (`H` moves to the next).
    public var isCurrent: Bool

    public init(name: String, connection: Connection, isCurrent: Bool) {
        self.name = name
        self.connection = connection
        self.isCurrent = isCurrent
    }

    /// The words after the name: `connected`, `connecting`, `lost: retry in 4 s`.
    public func stateText(now: Date) -> String {
        switch connection {
        case .connecting: return "connecting"
        case .connected: return "connected"
        case .lost(_, let retryAt):
            let seconds = max(0, Int(retryAt.timeIntervalSince(now).rounded(.up)))
            return seconds == 0 ? "lost: retrying" : "lost: retry in \(seconds) s"
        }
    }

    public var isLost: Bool {
        if case .lost = connection { return true }
        return false
    }
}
