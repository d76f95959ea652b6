import Dispatch

/// Runs Swift tasks on Dispatch threads of their own instead of the cooperative pool.
///
/// The pool has one thread per core, and any code that blocks one of them (a synchronous wait
/// inside an async function, a test sleeping between checks) holds back every task queued behind
/// it. Work that must keep moving whatever its host does (a transfer's bytes, the loopback
/// server's answers) asks for this executor with `Task(executorPreference:)`.
public final class DispatchTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    /// A concurrent executor; its queue's threads are made as needed.
    public init(label: String) {
        queue = DispatchQueue(label: label, attributes: .concurrent)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
