/// Bytes per second over a sliding window of samples.
struct RateMeter: Sendable {
    /// How far back the rate looks.
    let window: Duration
    private var samples: [(at: ContinuousClock.Instant, bytes: Int64)] = []

    init(window: Duration = .seconds(3)) {
        self.window = window
    }

    /// Forgets the history (the byte count restarted, e.g. after a `200` to a range request).
    mutating func reset() { samples.removeAll() }

    /// Adds a sample and drops the ones older than the window (keeping one at or before its start,
    /// so the window stays full).
    mutating func record(_ bytes: Int64, at instant: ContinuousClock.Instant) {
        samples.append((instant, bytes))
        while samples.count > 2, samples[1].at <= instant - window { samples.removeFirst() }
    }

    /// The rate between the oldest and newest sample, or `nil` with fewer than two samples.
    var bytesPerSecond: Double? {
        guard let first = samples.first, let last = samples.last, samples.count >= 2 else { return nil }
        let elapsed = last.at - first.at
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds > 0 else { return nil }
        return Double(last.bytes - first.bytes) / seconds
    }
}
