import Dispatch
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import TaskState

/// Runs a ``SchedulerDaemon`` on a thread of its own inside another program (`bgtop --demo`).
///
/// The caller must block SIGCHLD in every thread before creating this (so the scheduler's
/// signalfd, not some other thread, receives it) and must not reap children itself: the
/// scheduler made the whole process a child subreaper, so orphans of its launches (and any
/// child of the caller's) are reaped by it.
public final class SchedulerThread: @unchecked Sendable {
    // @unchecked: `daemon` is touched by the scheduler thread only, except for `requestStop()`,
    // which only writes a byte to a pipe.
    private let daemon: SchedulerDaemon
    /// The loop's exit status, once it has ended.
    private let status = Mutex<Int32?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    public init(daemon: SchedulerDaemon) {
        self.daemon = daemon
    }

    /// Starts the scheduler loop.
    public func start() {
        let started = DetachedThread.spawn(name: "bgtaskd") { [self] in
            let result = daemon.run()
            status.withLock { $0 = result }
            finished.signal()
        }
        if started != 0 { status.withLock { $0 = 1 } }
    }

    /// Stops the loop and waits for it (at most `timeout` seconds). Returns its exit status.
    @discardableResult
    public func stop(timeout: TimeInterval = 5) -> Int32 {
        daemon.requestStop()
        if let ended = status.withLock({ $0 }) { return ended }
        // Signalled once by the loop; passed on, so that a stop waiting beside this one wakes too.
        if finished.wait(timeout: .now() + timeout) == .success { finished.signal() }
        return status.withLock { $0 } ?? 0
    }
}
