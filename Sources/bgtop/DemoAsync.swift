import Foundation

/// Runs async work (the loopback servers' start and stop) from the synchronous start-up and
/// shutdown of the demo.
enum DemoAsync {
    static func wait<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) throws -> T {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Task {
            do { result.set(.success(try await work())) } catch { result.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return try result.get()
    }
}

/// Carries a result from a `Task` to the thread waiting for it.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private var result: Result<T, any Error>?
    private let lock = NSLock()

    func set(_ value: Result<T, any Error>) {
        lock.lock()
        result = value
        lock.unlock()
    }

    func get() throws -> T {
        lock.lock()
        defer { lock.unlock() }
        return try result!.get()
    }
}
