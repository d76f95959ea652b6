import Dispatch
import Synchronization

/// One activity of ``BGProcessInfo/performExpiringActivity(withReason:using:)``: its two calls,
/// the expired one at most once and never begun after the first call returned (a finishing task
/// that ends as its time runs out must not hear of the expiry after it ended).
///
/// The expiry is decided inside the dispatched closure, in the same lock as the end, so an
/// expiry delivered just before the first call returns is either run before the activity ends
/// (and waited for) or not at all.
final class ExpiringActivity: Sendable {
    private enum Phase {
        /// The first call runs; no expiry yet.
        case armed
        /// The expired call runs.
        case expiring
        /// The expired call returned.
        case expired
        /// The first call returned before any expired call began: none will.
        case finished
    }

    private let block: @Sendable (Bool) -> Void
    private let queue: DispatchQueue
    private let phase = Mutex(Phase.armed)
    private let expiredReturned = DispatchSemaphore(value: 0)

    /// `queue` runs the expired call: the global concurrent queue, so a slow block holds up no
    /// other task, and the first call, which occupies its own thread, is not waited for.
    init(_ block: @escaping @Sendable (Bool) -> Void, queue: DispatchQueue = .global()) {
        self.block = block
        self.queue = queue
    }

    /// The time ran out: calls `block(true)` on `queue` unless the activity ended (or already
    /// expired) by the time that call would begin.
    func expire() {
        guard phase.withLock({ $0 == .armed }) else { return }
        queue.async { [self] in
            let begins = phase.withLock { current -> Bool in
                guard current == .armed else { return false }
                current = .expiring
                return true
            }
            guard begins else { return }
            block(true)
            phase.withLock { $0 = .expired }
            expiredReturned.signal()
        }
    }

    /// Calls `block(false)`, then ends the activity: when this returns, the expired call has
    /// returned or will never begin.
    func run() {
        block(false)
        let expiring = phase.withLock { current -> Bool in
            switch current {
            case .armed:
                current = .finished
                return false
            case .expiring:
                return true
            case .expired, .finished:
                return false
            }
        }
        if expiring { expiredReturned.wait() }
    }
}
