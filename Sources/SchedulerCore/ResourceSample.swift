import FoundationEssentials
import TaskState

/// One measurement of a launch's process tree, as the runtime's resource monitor hands it to the
/// core: values only, read from the kernel at the edge.
public struct ResourceSample: Sendable, Equatable {
    /// `BGTASK_LAUNCH_ID` of the launch.
    public var launchID: String
    public var app: Identifier
    /// Monotonic seconds (never the wall clock): what the CPU window's arithmetic uses.
    public var time: Double
    /// CPU seconds the tree used since the launch, user plus system.
    public var cpuSeconds: Double
    public var memoryBytes: Int64
    public var peakMemoryBytes: Int64
    /// The live processes counted, each proved by its start time; empty when nothing of the
    /// launch runs any more.
    public var members: [LeftoverEnding.Member]
    /// Whether the scheduler started the launch's process (only such a tree is ever ended as
    /// leftover: a person's process that took a task over, or began a finishing task, is not).
    public var startedByScheduler: Bool
    /// The process the launch started (or the task's process), while it runs.
    public var leader: Int32?

    public init(launchID: String, app: Identifier, time: Double, cpuSeconds: Double, memoryBytes: Int64,
                peakMemoryBytes: Int64, members: [LeftoverEnding.Member], startedByScheduler: Bool, leader: Int32?) {
        self.launchID = launchID
        self.app = app
        self.time = time
        self.cpuSeconds = cpuSeconds
        self.memoryBytes = memoryBytes
        self.peakMemoryBytes = peakMemoryBytes
        self.members = members
        self.startedByScheduler = startedByScheduler
        self.leader = leader
    }
}

/// What the core keeps of the resource monitor's samples: the last figures of each launch (for
/// the events that end its tasks), its CPU window, and the endings of leftover processes.
public struct ResourceAccounting: Sendable {
    /// The last sample's totals of a launch.
    public struct Usage: Sendable, Equatable {
        public var cpuSeconds: Double
        public var peakMemoryBytes: Int64
    }

    public internal(set) var usage: [String: Usage] = [:]
    public internal(set) var windows: [String: CPUWindow] = [:]
    /// Launches the scheduler started whose tasks are all finished while their first process
    /// still runs: since when (it gets the grace to exit on its own).
    public internal(set) var idleSince: [String: Date] = [:]
    /// Leftover processes being ended, by launch id (kept in `processes.json`).
    public internal(set) var endings: [String: LeftoverEnding] = [:]

    public init() {}
}
