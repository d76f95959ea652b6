import FoundationEssentials

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
    /// ``cpuSeconds`` a file may hold: 0 to 10^12 s (some 31,700 years of one core).
    public static let cpuSecondsRange: ClosedRange<Double> = 0...1e12
    /// ``cpuPercent`` a file may hold: 0 to 10^5 % (a thousand cores busy).
    public static let cpuPercentRange: ClosedRange<Double> = 0...1e5
    /// ``memoryBytes`` and ``peakMemoryBytes`` a file may hold: 0 to 2^50 bytes (1 PiB).
    public static let memoryRange: ClosedRange<Int64> = 0...(1 << 50)

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

    private enum CodingKeys: String, CodingKey {
        case launchID, app, pids, cpuSeconds, cpuPercent, memoryBytes, peakMemoryBytes, source, phase, sampledAt
    }

    /// Checks what a file could get wrong: `resources.json` (and the ssh feed carrying it) is
    /// input, and its figures reach conversions to `Int` in the readers. A number out of its
    /// range (or not finite) or a pid below 1 makes the file unreadable, naming the field; pids
    /// past ``maximumPids`` are dropped, as the monitor would not have listed them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        launchID = try container.decode(String.self, forKey: .launchID)
        app = try container.decode(Identifier.self, forKey: .app)
        var list = try container.nestedUnkeyedContainer(forKey: .pids)
        var kept: [Int32] = []
        while !list.isAtEnd, kept.count < Self.maximumPids {
            let pid = try list.decode(Int32.self)
            guard pid >= 1 else {
                throw DecodingError.dataCorruptedError(in: list, debugDescription: "a pid must be 1 or more, not \(pid)")
            }
            kept.append(pid)
        }
        pids = kept
        cpuSeconds = try container.decode(Double.self, forKey: .cpuSeconds)
        cpuPercent = try container.decodeIfPresent(Double.self, forKey: .cpuPercent)
        memoryBytes = try container.decode(Int64.self, forKey: .memoryBytes)
        peakMemoryBytes = try container.decode(Int64.self, forKey: .peakMemoryBytes)
        source = try container.decode(Source.self, forKey: .source)
        phase = try container.decodeIfPresent(Phase.self, forKey: .phase) ?? .running
        sampledAt = try container.decode(Date.self, forKey: .sampledAt)
        try Self.check(cpuSeconds, .cpuSeconds, in: Self.cpuSecondsRange, unit: "seconds", container)
        if let cpuPercent { try Self.check(cpuPercent, .cpuPercent, in: Self.cpuPercentRange, unit: "percent", container) }
        for (value, key) in [(memoryBytes, CodingKeys.memoryBytes), (peakMemoryBytes, .peakMemoryBytes)]
        where !Self.memoryRange.contains(value) {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "expected bytes from \(Self.memoryRange.lowerBound) to \(Self.memoryRange.upperBound), not \(value)")
        }
    }

    private static func check(_ value: Double, _ key: CodingKeys, in range: ClosedRange<Double>, unit: String,
                              _ container: KeyedDecodingContainer<CodingKeys>) throws {
        guard value.isFinite, range.contains(value) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container,
                debugDescription: "expected \(unit) from \(NumericBounds.describe(range.lowerBound)) to \(NumericBounds.describe(range.upperBound)), not \(NumericBounds.describe(value))")
        }
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
