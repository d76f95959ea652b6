import Foundation
import Logging

/// Runs a ``SchedulerDaemon`` on a thread of its own inside another program (`bgtop --demo`).
///
/// The caller must block SIGCHLD in every thread before creating this (so the scheduler's
/// signalfd, not some other thread, receives it) and must not reap children itself: the
/// scheduler made the whole process a child subreaper, so orphans of its launches (and any
/// child of the caller's) are reaped by it.
public final class SchedulerThread: @unchecked Sendable {
    // @unchecked: `daemon` is touched by the scheduler thread only, except for `requestStop()`,
    // which only writes a byte to a pipe; `finished` is guarded by `condition`.
    private let daemon: SchedulerDaemon
    private let condition = NSCondition()
    private var finished = false
    private var status: Int32 = 0

    public init(daemon: SchedulerDaemon) {
        self.daemon = daemon
    }

    /// Starts the scheduler loop.
    public func start() {
        let thread = Thread { [self] in
            let result = daemon.run()
            condition.lock()
            status = result
            finished = true
            condition.broadcast()
            condition.unlock()
        }
        thread.name = "bgtaskd"
        thread.start()
    }

    /// Stops the loop and waits for it (at most `timeout` seconds). Returns its exit status.
    @discardableResult
    public func stop(timeout: TimeInterval = 5) -> Int32 {
        daemon.requestStop()
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while !finished && condition.wait(until: deadline) {}
        return status
    }
}
