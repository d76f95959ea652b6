import Dispatch
import Synchronization

/// Sleeping until a deadline on a Dispatch timer source, in place of `Task.sleep`.
///
/// On Linux, `Task.sleep` wakes its task through Dispatch's global concurrent queues, and the
/// first job one of those queues runs starts libdispatch's worker monitor: a one-second timer
/// that wakes the process from then on for as long as it lives (`_dispatch_workq_monitor_pools`).
/// The scheduler daemon must wake zero times once its transfers are done, so the engine's timers
/// fire on a serial queue instead, whose (overcommit) threads the monitor does not watch and
/// which end by themselves when idle.
enum TimerSleep {
    private static let queue = DispatchQueue(label: "TransferEngine.timers")

    /// Returns at `deadline`, or throws `CancellationError` as soon as the task is cancelled.
    static func sleep(until deadline: ContinuousClock.Instant) async throws {
        let sleeper = Sleeper(queue: queue)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                sleeper.start(continuation, after: ContinuousClock.now.duration(to: deadline))
            }
        } onCancel: {
            sleeper.finish(cancelled: true)
        }
    }
}

/// One sleep: its continuation and timer, resumed exactly once by whichever of the timer and a
/// cancellation comes first.
private final class Sleeper: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, any Error>?
        var started = false
        var finished = false
    }

    private let state = Mutex(State())
    /// Dispatch sources may be used from any thread.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    init(queue: DispatchQueue) {
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    func start(_ continuation: CheckedContinuation<Void, any Error>, after delay: Duration) {
        let cancelledFirst = state.withLock { state -> Bool in
            state.started = true
            if state.finished { return true }
            state.continuation = continuation
            return false
        }
        // Whole nanoseconds, at most about 30 years (no deadline of the engine is further).
        let (seconds, attoseconds) = max(delay, .zero).components
        let nanoseconds = Int(min(seconds, 1 << 30)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        // The handler holds the sleeper until the timer is cancelled, which every way out does.
        timer.setEventHandler { [self] in finish(cancelled: false) }
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
        // Activated in every case: libdispatch does not allow releasing a source never activated.
        timer.activate()
        if cancelledFirst {
            timer.cancel()
            continuation.resume(throwing: CancellationError())
        }
    }

    func finish(cancelled: Bool) {
        let (continuation, started) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, Bool) in
            guard !state.finished else { return (nil, false) }
            state.finished = true
            defer { state.continuation = nil }
            return (state.continuation, state.started)
        }
        if started { timer.cancel() }
        if cancelled {
            continuation?.resume(throwing: CancellationError())
        } else {
            continuation?.resume()
        }
    }
}
