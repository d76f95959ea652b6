import Synchronization

/// A point where the server keeps a request waiting, before it answers, until the test lets it
/// go (``Faults/hold``): a download's response sends nothing, not even its head, and an upload is
/// read whole and then left without its answer.
///
/// Unlike a stall of some seconds, a hold lasts however long a test on a loaded machine takes to
/// get to what must happen while the request is open: the test waits until ``arrivals`` says the
/// request is there, acts, then calls ``release()``. ``LoopbackServer/shutdown()`` ends a request
/// still held (its connection closes without an answer). A client's own no-progress timeout
/// (60 s for a transfer unless set) is not stopped by it.
public final class ResponseHold: Hashable, Sendable {
    private struct State {
        var released = false
        var arrivals = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// How many requests have reached the hold so far (those waiting and those let go).
    public var arrivals: Int { state.withLock { $0.arrivals } }

    /// Lets every request waiting at the hold go on, and every later one pass without waiting.
    public func release() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Counts the request and waits until ``release()``; throws `CancellationError` when the
    /// server's task is cancelled first (its shutdown).
    func wait() async throws {
        let number = state.withLock { state -> Int in
            state.arrivals += 1
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let goOn = state.withLock { state -> Bool in
                    if state.released || Task.isCancelled { return true }
                    state.waiters[number] = continuation
                    return false
                }
                if goOn { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: number) }?.resume()
        }
        try Task.checkCancellation()
    }

    public static func == (lhs: ResponseHold, rhs: ResponseHold) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
