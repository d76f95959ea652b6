import Dispatch
import FoundationEssentials
import SchedulerCore
import Synchronization
import TaskState
import TransferEngine
#if canImport(Glibc)
import Glibc
#endif

/// The daemon's side of the transfer engine: turns the policy's transfer actions into attempts,
/// and hands the engine's events (which arrive on the engine's threads) to the scheduler's loop
/// through a pipe, so the loop stays the only writer of state.
final class TransferRunner {
    private let paths: StatePaths
    private let engine = TransferEngine()
    private let inbox = EventQueue()
    private let wake: @Sendable () -> Void
    /// Attempts started and not yet ended *as far as the loop knows*: the engine forgets an
    /// attempt before its final event reaches the loop, and a new attempt must not start (nor
    /// the old one's end be taken for the new one's) in between.
    private(set) var inFlight: Set<TaskKey> = []

    /// `wake` is called, from any thread, when events are waiting in ``takeEvents()``.
    init(paths: StatePaths, wake: @escaping @Sendable () -> Void) {
        self.paths = paths
        self.wake = wake
    }

    /// Carries out one action. A start that cannot even begin is reported as a failed attempt.
    func perform(_ action: TransferAction) {
        switch action {
        case .start(let record):
            inFlight.insert(record.key)
            let job = self.job(for: record)
            let inbox = inbox
            let wake = wake
            do {
                // An upload's answer is kept in the same folder as a download's file.
                try StateFiles.ensureDirectory(paths.downloads)
                try StateFiles.ensureDirectory(paths.downloads(of: record.app))
                try engine.start(job) { event in
                    inbox.events.withLock { $0.append(event) }
                    wake()
                }
            } catch {
                inbox.events.withLock {
                    $0.append(TransferEvent(key: record.key, kind: .failed(TransferFailure(classifying: error)),
                                            progress: TransferProgress(bytesTransferred: record.bytesTransferred)))
                }
                wake()
            }
        case .pause(let key):
            engine.pause(key)
        case .cancel(let key):
            if !engine.cancel(key) {
                TransferJob.removePartialData(at: paths.transferPartialData(key))
            }
        case .discardDownload(let record):
            removeOrphanedDownload(of: record)
        }
    }

    /// The engine's events since the last call, in order.
    func takeEvents() -> [TransferEvent] {
        let events = inbox.events.withLock { events in
            defer { events.removeAll() }
            return events
        }
        for event in events where event.isFinal { inFlight.remove(event.key) }
        return events
    }

    /// A download that completed after it was cancelled: its file has no record any more.
    func removeOrphanedDownload(of record: TransferRecord) {
        guard record.direction == .download, let destination = record.destination else { return }
        try? StateFiles.remove("\(paths.downloads(of: record.app))/\(destination)")
    }

    /// The attempts running now (after a restart, none: every `running` record starts again).
    var runningKeys: Set<TaskKey> { engine.runningKeys }

    /// Pauses every attempt and waits for the engine to let go of its threads.
    func shutdown() {
        let engine = engine
        // A task would start the concurrency pool's threads (SwiftNIO's event loops) only to find
        // that no transfer ever ran.
        guard !engine.neverStarted else { return }
        let done = DispatchSemaphore(value: 0)
        Task {
            await engine.shutdown()
            done.signal()
        }
        done.wait()
    }

    private func job(for record: TransferRecord) -> TransferJob {
        var job = baseJob(for: record)
        job.headers = record.headers ?? []
        job.secretHeaderNames = record.secretHeaderNames ?? []
        if record.direction == .download, let method = record.method { job.downloadMethod = method }
        if record.direction == .upload { job.responseBodyFile = paths.uploadResponseBody(record.key) }
        return job
    }

    private func baseJob(for record: TransferRecord) -> TransferJob {
        let timeout = record.timeoutIntervalForRequest ?? TransferRecord.defaultTimeoutIntervalForRequest
        switch record.direction {
        case .download:
            return .download(record.key, from: record.url, partialFile: paths.transferPartialData(record.key),
                             appFolder: paths.downloads(of: record.app), destination: record.destination ?? record.identifier.rawValue,
                             timeoutIntervalForRequest: timeout, resourceDeadline: record.resourceDeadline,
                             expectedSHA256: record.sha256)
        case .upload:
            return .upload(record.key, to: record.url, sourceFile: record.sourceFile ?? "/dev/null",
                           method: record.method.flatMap(TransferJob.UploadMethod.init(rawValue:)) ?? .put,
                           timeoutIntervalForRequest: timeout, resourceDeadline: record.resourceDeadline)
        }
    }
}

/// Engine events on their way from the engine's threads to the scheduler's loop.
private final class EventQueue: Sendable {
    let events = Mutex<[TransferEvent]>([])
}

extension TransferEvent {
    /// How the attempt ended, in the policy's terms; `nil` for progress.
    var attemptEnd: TransferAttemptEnd? {
        switch kind {
        case .progress, .restarted, .requested: return nil
        case .completed(let status): return .completed(statusCode: status)
        case .failed(let failure):
            return .failed(message: failure.description, transient: failure.isTransient, retryAfter: failure.retryAfter,
                           madeProgress: progress.bytesMovedThisAttempt > 0)
        case .paused: return .paused
        case .cancelled: return .cancelled
        }
    }
}
