import Foundation

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
}
