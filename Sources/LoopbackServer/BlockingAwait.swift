import Dispatch
import FoundationEssentials
import Synchronization

/// Runs async work (starting or stopping a loopback server) from synchronous code and waits for
/// it: `bgbench` and `bgtop --demo` start their servers from plain `main` code. Never call it on
/// a thread of the concurrency pool, which it would block.
public func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let slot = AwaitSlot<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        slot.value.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try slot.value.withLock { $0! }.get()
}

/// Where ``blockingAwait(_:)`` leaves the result.
private final class AwaitSlot<T: Sendable>: Sendable {
    let value = Mutex<Result<T, any Error>?>(nil)
}
