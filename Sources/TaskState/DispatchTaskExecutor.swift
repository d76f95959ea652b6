import Dispatch

/// Runs Swift tasks on Dispatch threads of their own instead of the cooperative pool.
///
/// The pool has one thread per core, and any code that blocks one of them (a synchronous wait
/// inside an async function, a test sleeping between checks) holds back every task queued behind
/// it. Work that must keep moving whatever its host does (a transfer's bytes, the loopback
/// server's answers) asks for this executor with `Task(executorPreference:)`.
///
/// Each job goes to a serial queue of its own, so jobs never wait for one another and run on
/// Dispatch's overcommit threads (made as needed, ended when idle). A concurrent queue would run
/// them on the global concurrent pool instead, whose first job on Linux starts libdispatch's
/// once-a-second worker monitor for the rest of the process's life: an idle daemon that once
/// carried a transfer would wake every second.
public final class DispatchTaskExecutor: TaskExecutor {
    private let label: String

    /// An executor whose queues carry `label` (seen in debuggers and thread names).
    public init(label: String) {
        self.label = label
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        DispatchQueue(label: label).async { job.runSynchronously(on: executor) }
    }
}
