import FoundationEssentials
import Synchronization
import TaskState
@_exported import TransferCore

/// Why ``TransferEngine/start(_:events:)`` refused a job.
public enum TransferStartError: Error, Hashable, Sendable, CustomStringConvertible {
    /// An attempt of this transfer is already running.
    case alreadyRunning(TaskKey)

    public var description: String {
        switch self {
        case .alreadyRunning(let key): return "transfer \(key) is already running"
        }
    }
}

/// Carries out attempts of background transfers over HTTP: one attempt per transfer at a time,
/// any number of transfers at once. Scheduling, retries and limits belong to the caller.
///
/// The HTTP client is made when an attempt starts and shut down when the last running attempt
/// ends, so an idle engine holds no threads.
public final class TransferEngine: Sendable {
    private struct State {
        var running: [TaskKey: AttemptControl] = [:]
        var lease: ClientLease?
        /// The shutdown of earlier clients, chained so ``shutdown()`` can wait for all of them.
        var closing: Task<Void, Never>?
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// The default of ``init(connectTimeout:)``.
    public static let defaultConnectTimeout: Double = 15

    private let state = Mutex(State())
    /// Attempts run on threads of their own, never starved by a host that blocks pool threads.
    static let executor = DispatchTaskExecutor(label: "TransferEngine")
    private let connectTimeout: Double

    /// An engine whose connection attempts give up after `connectTimeout` seconds when the host
    /// stays silent. A connection the kernel refuses, or a host or network it reports unreachable,
    /// fails the attempt at once (`connection refused`, `network unreachable`), never retried by
    /// the HTTP client: retries are the caller's.
    public init(connectTimeout: Double = TransferEngine.defaultConnectTimeout) {
        self.connectTimeout = connectTimeout
    }

    /// Starts one attempt of `job`. `events` is called, from an arbitrary thread and in order,
    /// with progress and then exactly one final event; by the time the final event is delivered
    /// the transfer no longer counts as running, so it may be started again from the callback.
    public func start(_ job: TransferJob, events: @escaping @Sendable (TransferEvent) -> Void) throws(TransferStartError) {
        let control = AttemptControl()
        let lease = try state.withLock { state throws(TransferStartError) -> ClientLease in
            guard state.running[job.key] == nil else { throw .alreadyRunning(job.key) }
            state.running[job.key] = control
            if let lease = state.lease { return lease }
            let lease = ClientLease(connectTimeout: connectTimeout)
            state.lease = lease
            return lease
        }
        let executor = Self.executor
        let task = Task(executorPreference: executor) {
            let reporter = ProgressReporter(key: job.key, control: control, emit: events)
            let watchdog = Task(executorPreference: executor) {
                await control.watch(requestTimeout: job.timeoutIntervalForRequest, resourceDeadline: job.resourceDeadline)
            }
            let kind: TransferEvent.Kind
            switch job.files {
            case _ where job.resourceDeadline.map { $0 <= Date() } ?? false:
                job.removePartialData()
                kind = .failed(.resourceTimedOut)
            case .download(let files):
                kind = await DownloadAttempt(job: job, files: files, client: lease.client, control: control,
                                             reporter: reporter).run()
            case .upload(let upload):
                kind = await UploadAttempt(job: job, upload: upload, client: lease.client, control: control,
                                           reporter: reporter).run()
            }
            watchdog.cancel()
            self.finished(job.key)
            events(reporter.finalEvent(kind))
        }
        control.attach(task)
    }

    /// Stops a running transfer, keeping its partial data and validator for a later resume.
    /// Its final event is `paused`. Returns `false` when it was not running.
    @discardableResult
    public func pause(_ key: TaskKey) -> Bool {
        control(of: key)?.stop(.pause) ?? false
    }

    /// Stops a running transfer and removes its partial data. Its final event is `cancelled`.
    /// Returns `false` when it was not running (then see ``TransferJob/removePartialData()``).
    @discardableResult
    public func cancel(_ key: TaskKey) -> Bool {
        control(of: key)?.stop(.cancel) ?? false
    }

    /// The transfers with an attempt running now.
    public var runningKeys: Set<TaskKey> {
        state.withLock { Set($0.running.keys) }
    }

    /// Whether an HTTP client (and its thread) exists now; `false` whenever nothing runs.
    public var hasHTTPClient: Bool {
        state.withLock { $0.lease != nil }
    }

    /// Whether the engine never made an HTTP client: nothing runs, nothing is open or closing, so
    /// ``shutdown()`` has nothing to wait for.
    public var neverStarted: Bool {
        state.withLock { $0.running.isEmpty && $0.lease == nil && $0.closing == nil }
    }

    /// Pauses every running transfer, waits for their final events, and waits until every HTTP
    /// client the engine made has shut down and its thread has ended.
    public func shutdown() async {
        let controls = state.withLock { Array($0.running.values) }
        for control in controls { control.stop(.pause) }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let resumeNow = state.withLock { state -> Bool in
                if state.running.isEmpty { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        let closing = state.withLock { $0.closing }
        await closing?.value
    }

    private func control(of key: TaskKey) -> AttemptControl? {
        state.withLock { $0.running[key] }
    }

    /// Forgets a finished attempt; the last one out closes the client.
    private func finished(_ key: TaskKey) {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.running[key] = nil
            guard state.running.isEmpty else { return [] }
            if let lease = state.lease {
                state.lease = nil
                let previous = state.closing
                state.closing = Task(executorPreference: Self.executor) {
                    await previous?.value
                    await lease.close()
                }
            }
            let waiters = state.idleWaiters
            state.idleWaiters = []
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
