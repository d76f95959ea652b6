import FoundationEssentials
import Glibc

/// When a subscriber tries again: 1 s after a healthy stream ended, then doubling with each
/// failed attempt in a row up to 5 minutes: a server that keeps failing is never hammered.
enum ReconnectBackoff {
    static let firstSeconds: TimeInterval = 1
    static let longestSeconds: TimeInterval = 300
    /// A stream with nothing at all (ntfy sends a keepalive every 45 s) for this long is dead.
    static let idleSeconds: TimeInterval = 120

    static func delay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 1 else { return firstSeconds }
        return min(longestSeconds, firstSeconds * pow(2, Double(min(failures - 1, 20))))
    }
}
