import FoundationEssentials

/// `processes.json`: every process the scheduler started (or decided to kill) that has not been
/// seen to end. It is how a scheduler that restarts after `kill -9` knows which processes are its
/// own, so that none of them runs on unsupervised: a live one is adopted, or killed when its kill
/// was committed but perhaps never sent. See `docs/state-format.md`.
public struct ProcessLedger: Codable, Hashable, Sendable {
    /// One process, named by pid and start time, so a reused pid is never taken for it.
    public struct Entry: Codable, Hashable, Sendable {
        public var pid: Int32
        /// `/proc/<pid>/stat` field 22; `nil` when it could not be read at launch.
        public var processStartTicks: UInt64?
        /// The group killed with it: the launch's own group, or `nil` for a process the scheduler
        /// did not start (finishing tasks), of which only the process is killed.
        public var processGroup: Int32?
        public var app: Identifier
        /// `BGTASK_LAUNCH_ID` of the launch; every process of the launch (its children too)
        /// carries it in its environment.
        public var launchID: String
        public var launchedAt: Date
        /// Set in the commit that decides the kill; a process still alive with this set at
        /// start-up is killed then.
        public var killDecidedAt: Date?

        public init(pid: Int32, processStartTicks: UInt64?, processGroup: Int32?, app: Identifier,
                    launchID: String, launchedAt: Date, killDecidedAt: Date? = nil) {
            self.pid = pid
            self.processStartTicks = processStartTicks
            self.processGroup = processGroup
            self.app = app
            self.launchID = launchID
            self.launchedAt = launchedAt
            self.killDecidedAt = killDecidedAt
        }
    }

    public var processes: [Entry]
    /// Launches whose tasks are all finished and whose leftover processes are being ended;
    /// absent when there are none.
    public var endings: [LeftoverEnding]?

    public init(processes: [Entry] = [], endings: [LeftoverEnding]? = nil) {
        self.processes = processes
        self.endings = endings
    }
}
