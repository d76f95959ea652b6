import FoundationEssentials

/// The CPU a launch used over a sliding window, from cumulative samples: the CPU monitor's
/// measure.
///
/// Time is monotonic seconds (`CLOCK_MONOTONIC` in the daemon, anything steady in tests): a wall
/// clock set back or forward while a window is open must not turn ten seconds of work into an
/// hour's or a negative one. A sample that goes back in time, or whose CPU total shrinks (the
/// figures were reset, e.g. a cgroup that could not be kept), starts the window again instead.
public struct CPUWindow: Sendable, Equatable {
    public struct Sample: Sendable, Equatable {
        /// Monotonic seconds.
        public var time: Double
        /// CPU seconds used since the launch, user plus system.
        public var cpuSeconds: Double

        public init(time: Double, cpuSeconds: Double) {
            self.time = time
            self.cpuSeconds = cpuSeconds
        }
    }

    public let windowSeconds: Double
    /// Oldest first; the first is the newest sample at least ``windowSeconds`` old, when one is.
    public private(set) var samples: [Sample] = []

    public init(windowSeconds: Double) {
        self.windowSeconds = windowSeconds
    }

    /// Adds a sample and drops those no longer needed to span the window.
    public mutating func add(_ sample: Sample) {
        guard sample.time.isFinite, sample.cpuSeconds.isFinite, sample.cpuSeconds >= 0 else { return }
        if let last = samples.last, sample.time <= last.time || sample.cpuSeconds < last.cpuSeconds {
            // Not a later measurement of the same thing: nothing before it can be compared with it.
            samples = sample.time == last.time && sample.cpuSeconds >= last.cpuSeconds ? samples.dropLast() + [sample] : [sample]
            return
        }
        samples.append(sample)
        // Keep exactly one sample at or beyond the window's start.
        while samples.count > 2, sample.time - samples[1].time >= windowSeconds { samples.removeFirst() }
    }

    /// Average use over the whole window in percent of one core, or `nil` until the samples span
    /// the window: a launch is judged on a full window, never on its first busy second.
    public var averagePercent: Double? {
        guard let first = samples.first, let last = samples.last, last.time - first.time >= windowSeconds else { return nil }
        return (last.cpuSeconds - first.cpuSeconds) / (last.time - first.time) * 100
    }

    /// Use between the last two samples, in percent of one core (`nil` before two samples).
    public var latestPercent: Double? {
        guard samples.count >= 2 else { return nil }
        let previous = samples[samples.count - 2], last = samples[samples.count - 1]
        return (last.cpuSeconds - previous.cpuSeconds) / (last.time - previous.time) * 100
    }
}
