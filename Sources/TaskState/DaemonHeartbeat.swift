import FoundationEssentials

/// `daemon.json`: who the scheduler is and when it last did anything.
///
/// Whether the scheduler is *up* is decided by its lock (see ``StateLock``), never by the age of
/// this file: an idle scheduler does not wake up just to touch it.
public struct DaemonHeartbeat: Codable, Hashable, Sendable {
    public var pid: Int32
    public var version: String
    public var format: Int
    public var startedAt: Date
    /// The last time the scheduler woke up and committed anything.
    public var updatedAt: Date
    /// When the next timer is set to fire, if anything is waiting for a time.
    public var nextWakeAt: Date?
    public var configDirectory: String

    public init(pid: Int32, version: String, format: Int = JSONFormat.version, startedAt: Date,
                updatedAt: Date, nextWakeAt: Date?, configDirectory: String) {
        self.pid = pid
        self.version = version
        self.format = format
        self.startedAt = startedAt
        self.updatedAt = updatedAt
        self.nextWakeAt = nextWakeAt
        self.configDirectory = configDirectory
    }

    /// Whether a commit must write this heartbeat over `written`, the one last written: when
    /// anything but `updatedAt` changed, or `updatedAt` moved to another second. A busy
    /// scheduler thus replaces `daemon.json` at most once a second, not at every commit: each
    /// replacement is a new inode and a freed one, which ext4 without a journal makes every later
    /// file creation pay for (see docs/performance.md, Findings).
    public func needsWriting(over written: DaemonHeartbeat?) -> Bool {
        guard let written else { return true }
        var sameTime = self
        sameTime.updatedAt = written.updatedAt
        return sameTime != written || Self.second(updatedAt) != Self.second(written.updatedAt)
    }

    private static func second(_ date: Date) -> Double { date.timeIntervalSince1970.rounded(.down) }
}
