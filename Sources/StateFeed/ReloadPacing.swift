import FoundationEssentials

/// When the dashboard reads what changed on disk: at once after a quiet spell, so a lone change is
/// on screen without delay, and otherwise at most once per `interval`, so a stream of commits costs
/// one reload and one redraw per interval rather than one per inotify report. Nothing is due while
/// nothing changed: the event loop only gets a timeout while a change waits.
///
/// Times are seconds on a monotonic clock, passed in, so the rule is testable without waiting.
public struct ReloadPacing: Sendable, Hashable {
    public let interval: Double
    private var lastReload: Double?
    private var pendingSince: Double?

    public init(interval: Double) {
        self.interval = interval
    }

    /// A change was reported at `now` and has not been read yet.
    public mutating func changed(at now: Double) {
        if pendingSince == nil { pendingSince = now }
    }

    public var isPending: Bool { pendingSince != nil }

    /// When the next reload should happen; nil while nothing is pending.
    public var due: Double? {
        guard let pendingSince else { return nil }
        guard let lastReload else { return pendingSince }
        return max(pendingSince, lastReload + interval)
    }

    public func isDue(at now: Double) -> Bool {
        due.map { $0 <= now } ?? false
    }

    /// Everything reported so far was read at `now`.
    public mutating func reloaded(at now: Double) {
        lastReload = now
        pendingSince = nil
    }

    /// The timeout for `poll`, in milliseconds: -1 (wait for the kernel alone) while nothing is
    /// pending, else the time until the reload is due, rounded up so the wake-up is not early.
    public func pollTimeout(at now: Double) -> Int32 {
        guard let due else { return -1 }
        let milliseconds = ((due - now) * 1000).rounded(.up)
        return Int32(max(0, min(milliseconds, Double(Int32.max))))
    }
}
