import Synchronization
import TaskState
import TransferCore

/// Counts an attempt's bytes and sends `progress` events: one when the response head arrives, then
/// at most one per ``interval`` while bytes move, so a state file written per event stays cheap.
final class ProgressReporter: Sendable {
    /// The shortest time between two progress events: about four a second.
    static let interval = Duration.milliseconds(250)

    private struct State {
        var progress: TransferProgress
        var meter = RateMeter()
        var lastEvent: ContinuousClock.Instant?
        /// Bytes in the last event sent, so a trailing event is sent only when the count moved.
        var lastSentBytes: Int64 = -1
        /// A trailing event is due after the throttle interval (bytes moved since the last one).
        var trailingScheduled = false
        /// The final event was made; nothing may follow it.
        var finished = false
        /// The attempt's first request was reported (``requested(rangeStart:)``).
        var requestSent = false
        /// The response that completed the attempt (``answered(_:)``).
        var response: FinalResponse?
    }

    private let key: TaskKey
    private let emit: @Sendable (TransferEvent) -> Void
    private let control: AttemptControl
    private let state: Mutex<State>

    init(key: TaskKey, control: AttemptControl, emit: @escaping @Sendable (TransferEvent) -> Void) {
        self.key = key
        self.control = control
        self.emit = emit
        state = Mutex(State(progress: TransferProgress(bytesTransferred: 0)))
    }

    /// The progress so far.
    var current: TransferProgress { state.withLock { $0.progress } }

    /// A response head arrived: the counts start at `bytes` of `expected`. Always sends an event.
    func begin(bytes: Int64, expected: Int64?, validator: ResumeValidator) {
        control.noteProgress()
        let now = ContinuousClock.now
        let progress = state.withLock { state in
            state.meter.reset()
            state.meter.record(bytes, at: now)
            state.progress = TransferProgress(bytesTransferred: bytes, bytesExpected: expected, bytesPerSecond: nil,
                                              validator: validator, bytesMovedThisAttempt: state.progress.bytesMovedThisAttempt)
            state.lastEvent = now
            state.lastSentBytes = bytes
            return state.progress
        }
        emit(TransferEvent(key: key, kind: .progress, progress: progress))
    }

    /// Sets the count without an event (e.g. before a request is sent).
    func set(bytes: Int64, expected: Int64?, validator: ResumeValidator) {
        state.withLock { state in
            state.progress = TransferProgress(bytesTransferred: bytes, bytesExpected: expected, bytesPerSecond: nil,
                                              validator: validator, bytesMovedThisAttempt: state.progress.bytesMovedThisAttempt)
        }
    }

    /// The held bytes were dropped for `reason`: the count is 0 again. Always sends an event.
    func restarted(_ reason: String) {
        let progress = state.withLock { state in
            state.meter.reset()
            state.progress = TransferProgress(bytesTransferred: 0, bytesExpected: nil, bytesPerSecond: nil,
                                              validator: ResumeValidator(), bytesMovedThisAttempt: state.progress.bytesMovedThisAttempt)
            state.lastSentBytes = 0
            return state.progress
        }
        emit(TransferEvent(key: key, kind: .restarted(reason: reason), progress: progress))
    }

    /// The attempt's first request goes out, for the bytes from `rangeStart` on (`nil`: all of
    /// them). Later requests of the same attempt (a redirect, a continuation) send nothing.
    func requested(rangeStart: Int64?) {
        let progress: TransferProgress? = state.withLock { state in
            guard !state.requestSent else { return nil }
            state.requestSent = true
            return state.progress
        }
        if let progress { emit(TransferEvent(key: key, kind: .requested(rangeStart: rangeStart), progress: progress)) }
    }

    /// The count is what the file holds (at the end of an attempt, whatever the last event said).
    func settle(bytes: Int64) {
        state.withLock { $0.progress.bytesTransferred = bytes }
    }

    /// `count` more bytes moved; sends an event when the last one is at least ``interval`` old.
    func advance(by count: Int) {
        control.noteProgress()
        let now = ContinuousClock.now
        var trailingAt: ContinuousClock.Instant?
        let due: TransferProgress? = state.withLock { state in
            state.progress.bytesTransferred += Int64(count)
            state.progress.bytesMovedThisAttempt += Int64(count)
            if let last = state.lastEvent, now - last < Self.interval {
                // Throttled: make sure the count is sent once the interval is over, even if no
                // more bytes come (a stall must not leave the record behind the partial file).
                if !state.trailingScheduled {
                    state.trailingScheduled = true
                    trailingAt = last + Self.interval
                }
                return nil
            }
            state.lastEvent = now
            state.meter.record(state.progress.bytesTransferred, at: now)
            state.progress.bytesPerSecond = state.meter.bytesPerSecond
            state.lastSentBytes = state.progress.bytesTransferred
            return state.progress
        }
        if let due { emit(TransferEvent(key: key, kind: .progress, progress: due)) }
        if let trailingAt {
            Task(executorPreference: TransferEngine.executor) { [self] in
                try? await TimerSleep.sleep(until: trailingAt)
                sendTrailing()
            }
        }
    }

    /// The trailing event of a throttled burst; sent inside the lock so it can never follow the
    /// final event.
    private func sendTrailing() {
        state.withLock { state in
            state.trailingScheduled = false
            guard !state.finished, state.progress.bytesTransferred != state.lastSentBytes else { return }
            let now = ContinuousClock.now
            state.lastEvent = now
            state.meter.record(state.progress.bytesTransferred, at: now)
            state.progress.bytesPerSecond = state.meter.bytesPerSecond
            state.lastSentBytes = state.progress.bytesTransferred
            emit(TransferEvent(key: key, kind: .progress, progress: state.progress))
        }
    }

    /// The response that completed the attempt; it goes with a `completed` final event.
    func answered(_ response: FinalResponse) {
        state.withLock { $0.response = response }
    }

    /// The attempt's final event, with the progress so far (the engine sends it).
    func finalEvent(_ kind: TransferEvent.Kind) -> TransferEvent {
        let (progress, response) = state.withLock { state in
            state.finished = true
            return (state.progress, state.response)
        }
        guard case .completed = kind else { return TransferEvent(key: key, kind: kind, progress: progress) }
        return TransferEvent(key: key, kind: kind, progress: progress, response: response)
    }
}
