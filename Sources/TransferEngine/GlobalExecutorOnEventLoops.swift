import CLinuxSupport
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
    /// This is what SwiftNIO's `unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`
    /// does, except how the hook is found: NIO looks it up with `dlsym`, which finds nothing in a
    /// program built with `--static-swift-stdlib` (the runtime's symbol is hidden there), so such
    /// a `bgtaskd` silently kept Dispatch's pool. Here the linker resolves it (``bg_swift_task_enqueue_global_hook``).
    ///
    /// Call it once, from the main thread, before any task starts (`bgtaskd` does, first thing).
    /// `Task.sleep` still fires through Dispatch; the engine sleeps with its own timers.
    /// Returns whether the executor was installed.
    @discardableResult
    public static func runGlobalExecutorOnEventLoops() -> Bool {
        #if compiler(<6.6)
        // The hook's type up to Swift 6.5, as SwiftNIO assumes it too (its install is limited to
        // the same compilers): the job, and the runtime's own enqueue to fall back on.
        typealias EnqueueGlobalHook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void
        guard let slot = bg_swift_task_enqueue_global_hook(), slot.pointee == nil else { return false }
        return withUnsafeTemporaryAllocation(of: EnqueueGlobalHook.self, capacity: 1) { hook in
            hook.baseAddress!.initialize(to: { job, original in
                // `any()` keeps a job on the loop it was enqueued from, as NIO's install does.
                guard let loop = MultiThreadedEventLoopGroup.singleton.any() as? any SerialExecutor else {
                    return original(job)
                }
                loop.enqueue(ExecutorJob(job))
            })
            slot.pointee = hook.baseAddress!.withMemoryRebound(to: UnsafeMutableRawPointer?.self, capacity: 1) { $0.pointee }
            return true
        }
        #else
        return false
        #endif
    }
}
