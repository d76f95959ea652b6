import Foundation
import Synchronization
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The load of `bgbench dashboard-load`: submits streamed into the inbox at a steady rate from a
/// thread, each a durable `Inbox.enqueue` (what `bgctl submit` does, minus starting a process).
/// The requests cycle over a fixed set of (app, identifier) pairs, so after the first round each
/// submit replaces a pending request: the state stays the same size however long the run, and the
/// event log grows by a line or two per submit, as on a busy machine.
final class SubmitStream: Sendable {
    /// Submits enqueued so far, and those that could not be.
    private let counts = Mutex<(enqueued: Int, failed: Int, firstFailure: String?)>((0, 0, nil))
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread: `rate` submits a second over `apps`' identifiers, in turn.
    init(paths: StatePaths, apps: [BenchApp], rate: Double) {
        let pairs = apps.flatMap { app in app.identifiers.map { (app.id, $0) } }
        let later = Date().addingTimeInterval(30 * 86_400)
        Thread.detachNewThread { [self] in
            let inbox = Inbox(paths: paths)
            let start = Monotonic.now()
            var index = 0
            while !stopping.load(ordering: .relaxed) {
                // On a fixed schedule, so a slow enqueue is caught up rather than lowering the rate.
                let due = start + Double(index) / rate
                let wait = due - Monotonic.now()
                if wait > 0 { usleep(useconds_t(min(wait, 0.5) * 1_000_000)) }
                if Monotonic.now() < due { continue }
                let (app, identifier) = pairs[index % pairs.count]
                let request = SubmitRequest(app: app, identifier: identifier, kind: .processing, earliestBeginDate: later)
                do {
                    try inbox.enqueue(Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request)))
                    counts.withLock { $0.enqueued += 1 }
                } catch {
                    counts.withLock { counts in
                        counts.failed += 1
                        if counts.firstFailure == nil { counts.firstFailure = "\(error)" }
                    }
                }
                index += 1
            }
            finished.signal()
        }
    }

    var enqueued: Int { counts.withLock { $0.enqueued } }
    var failed: (count: Int, first: String?) { counts.withLock { ($0.failed, $0.firstFailure) } }

    /// Stops the thread and waits for it.
    func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }
}
