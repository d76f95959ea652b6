import Foundation

/// What the processes of one launch use, as last sampled by the scheduler's resource monitor:
/// one entry of ``ResourceReport`` (`resources.json`).
///
/// CPU and memory cover the launch's whole process tree: its own cgroup where the scheduler could
/// make one, else every process of its process group and every descendant carrying its
/// `BGTASK_LAUNCH_ID` (so a `setsid` child is counted too).
public struct LaunchResources: Codable, Hashable, Sendable {
    /// Where the figures come from.
    public enum Source: String, Codable, Sendable {
        /// The launch's own cgroup v2 (`cpu.stat`, `memory.current`, `memory.peak`).
        case cgroup
        /// Summed from `/proc` over the launch's processes.
        case proc
    }

    /// What the launch's processes are doing.
    public enum Phase: String, Codable, Sendable {
        /// Not being ended: a task of it runs or expires (or its first process has its grace to exit).
        case running
        /// Its tasks are all finished and what is left of its tree is being ended.
        case ending
    }

    public var launchID: String
    public var app: Identifier
    /// The processes counted in the last sample (at most ``maximumPids``), lowest first.
    public var pids: [Int32]
    /// User plus system CPU time of the whole tree since the launch, in seconds.
    public var cpuSeconds: Double
    /// CPU use over the last sample interval in percent of one core (`nil` until two samples).
    public var cpuPercent: Double?
    /// Resident memory of the tree now, in bytes.
    public var memoryBytes: Int64
    /// The most the tree has held since the launch, in bytes.
    public var peakMemoryBytes: Int64
    public var source: Source
    public var phase: Phase
    public var sampledAt: Date

    /// The most pids listed for one launch; the figures still count every process.
    public static let maximumPids = 64

    public init(launchID: String, app: Identifier, pids: [Int32], cpuSeconds: Double, cpuPercent: Double?,
                memoryBytes: Int64, peakMemoryBytes: Int64, source: Source, phase: Phase = .running, sampledAt: Date) {
        self.launchID = launchID
        self.app = app
        self.pids = pids
        self.cpuSeconds = cpuSeconds
        self.cpuPercent = cpuPercent
        self.memoryBytes = memoryBytes
        self.peakMemoryBytes = peakMemoryBytes
        self.source = source
        self.phase = phase
        self.sampledAt = sampledAt
    }
}

/// `resources.json`: the last sample of every launch whose processes are still alive. Written by
/// the scheduler's resource monitor at most once a second, and only while something runs; removed
/// (or left with no launches) when nothing does. A measurement, not a promise: it is not synced.
public struct ResourceReport: Codable, Hashable, Sendable {
    public var version: Int = 1
    public var sampledAt: Date
    public var launches: [LaunchResources]

    public init(sampledAt: Date, launches: [LaunchResources]) {
        self.sampledAt = sampledAt
        self.launches = launches
    }

    /// The sample of the launch that carries `task`, if any.
    public func resources(of task: LaunchedTask) -> LaunchResources? {
        launches.first { $0.launchID == task.launchID }
    }
}
