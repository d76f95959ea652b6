import FoundationEssentials

/// What is left of a launch whose tasks are all finished, being ended: SIGTERM when decided, then
/// SIGKILL at ``killAt``. Kept in `processes.json` (``ProcessLedger/endings``) from the commit
/// that decides it, so a scheduler that restarts in between still ends what it named.
public struct LeftoverEnding: Codable, Hashable, Sendable {
    /// One process, named by pid and start time, so a reused pid is never taken for it.
    public struct Member: Codable, Hashable, Sendable, Comparable {
        public var pid: Int32
        /// `/proc/<pid>/stat` field 22.
        public var processStartTicks: UInt64?

        public init(pid: Int32, processStartTicks: UInt64?) {
            self.pid = pid
            self.processStartTicks = processStartTicks
        }

        public static func < (lhs: Member, rhs: Member) -> Bool { lhs.pid < rhs.pid }
    }

    /// `BGTASK_LAUNCH_ID` of the launch.
    public var launchID: String
    public var app: Identifier
    /// The processes found when the ending was decided, and any found after.
    public var members: [Member]
    /// When SIGTERM was decided.
    public var decidedAt: Date
    /// When what is left gets SIGKILL.
    public var killAt: Date
    /// Set once SIGKILL was decided.
    public var killedAt: Date?

    public init(launchID: String, app: Identifier, members: [Member], decidedAt: Date, killAt: Date, killedAt: Date? = nil) {
        self.launchID = launchID
        self.app = app
        self.members = members
        self.decidedAt = decidedAt
        self.killAt = killAt
        self.killedAt = killedAt
    }
}
