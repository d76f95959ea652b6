import FoundationEssentials
import Synchronization
import TaskState

/// Why an attempt was stopped from outside its own work.
enum StopReason: Hashable, Sendable {
    case pause
    case cancel
    case requestTimeout(Double)
    case resourceTimeout
}

/// The shared handle of one running attempt: who stopped it and why, and when it last moved.
///
/// Stopping records the reason first and then cancels the attempt's task, so whatever error the
/// cancelled HTTP call throws, the attempt reports the reason instead.
final class AttemptControl: Sendable {
    private struct State {
        var reason: StopReason?
        var task: Task<Void, Never>?
        var lastProgress: ContinuousClock.Instant
    }

    private let state: Mutex<State>

    init() {
        state = Mutex(State(reason: nil, task: nil, lastProgress: .now))
    }

    /// The reason it was stopped, if it was.
    var stopReason: StopReason? { state.withLock { $0.reason } }

    /// Gives the control the task to cancel; cancels it at once if a stop came first.
    func attach(_ task: Task<Void, Never>) {
        let cancelNow = state.withLock { state -> Bool in
            state.task = task
            return state.reason != nil
        }
        if cancelNow { task.cancel() }
    }

    /// Stops the attempt for `reason`; the first reason wins. Returns whether this call stopped it.
    @discardableResult
    func stop(_ reason: StopReason) -> Bool {
        let task: Task<Void, Never>?? = state.withLock { state in
            guard state.reason == nil else { return .none }
            state.reason = reason
            return .some(state.task)
        }
        guard case .some(let attached) = task else { return false }
        attached?.cancel()
        return true
    }

    /// Bytes moved (or a response head arrived): the no-progress timer starts again.
    func noteProgress() {
        let now = ContinuousClock.now
        state.withLock { $0.lastProgress = now }
    }

    /// Waits, without polling, until nothing has moved for `requestTimeout` seconds or the
    /// resource deadline passes, then stops the attempt. Returns early when cancelled.
    func watch(requestTimeout: Double, resourceDeadline: Date?) async {
        // SafeNumber, not Int64(_:): a record from an older scheduler may hold any number.
        let idleLimit = Duration.milliseconds(SafeNumber.int64(min(max(requestTimeout, 0.001), 1e12) * 1000))
        while !Task.isCancelled {
            let now = ContinuousClock.now
            let lastProgress = state.withLock { $0.lastProgress }
            var wake = lastProgress + idleLimit
            if let resourceDeadline {
                let remaining = resourceDeadline.timeIntervalSinceNow
                if remaining <= 0 {
                    stop(.resourceTimeout)
                    return
                }
                wake = min(wake, now + .milliseconds(SafeNumber.int64(min(remaining, 1e12) * 1000, .up)))
            }
            if lastProgress + idleLimit <= now {
                stop(.requestTimeout(requestTimeout))
                return
            }
            do {
                try await TimerSleep.sleep(until: wake)
            } catch {
                return
            }
        }
    }
}
