import NIOCore
import NIOPosix

extension TransferEngine {
    /// Runs Swift concurrency's global executor on SwiftNIO's shared event loops instead of
    /// Dispatch's global concurrent queues, for a process that must wake zero times when idle.
    ///
    /// On Linux the first job those queues run starts libdispatch's worker monitor, a timer that
    /// wakes the process once a second for the rest of its life (`_dispatch_workq_monitor_pools`
    /// in `src/event/workqueue.c`). The HTTP client starts a plain `Task` for every request (to
    /// register its cancellation), so without this a daemon that carried one transfer woke every
    /// second forever. Idle event loops wait in `epoll_wait` with no timer armed.
    ///
    /// Call it once, from the main thread, before any task starts (`bgtaskd` does, first thing).
    /// `Task.sleep` still fires through Dispatch; the engine sleeps with its own timers.
    /// Returns whether the executor was installed.
    @discardableResult
    public static func runGlobalExecutorOnEventLoops() -> Bool {
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
    }
}
