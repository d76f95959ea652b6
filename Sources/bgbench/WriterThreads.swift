import Foundation
import Synchronization

/// Runs `count` writer threads over their own slices of work, released together, and reports how
/// long the slowest took. Real threads, not a pool: with 2 cores a pool would run 2 writers at a
/// time and hide the contention the benchmark is about.
enum WriterThreads {
    /// What the writers did.
    struct Outcome: Sendable {
        /// From the release of the writers to the end of the last one, seconds.
        var seconds: Double
        /// The monotonic time (nanoseconds) the writers were released at.
        var startNanoseconds: UInt64
        /// Per-operation durations in seconds, when the body reports them.
        var durations: [Double]
        /// The first failures, as text.
        var failures: [String]
    }

    /// Calls `writer(index, slice)` on its own thread for each slice, all released at once.
    /// `writer` returns the durations of the operations it timed (may be empty); a thrown error
    /// is reported as a failure.
    static func run<Item: Sendable>(slices: [[Item]], writer: @escaping @Sendable (Int, [Item]) throws -> [Double]) -> Outcome {
        let collected = Collected()
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for (index, slice) in slices.enumerated() {
            done.enter()
            let thread = Thread {
                ready.signal()
                go.wait()
                do {
                    collected.add(try writer(index, slice))
                } catch {
                    collected.fail("writer \(index): \(error)")
                }
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        for _ in slices { ready.wait() }
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in slices { go.signal() }
        done.wait()
        let end = DispatchTime.now().uptimeNanoseconds
        let (durations, failures) = collected.contents
        return Outcome(seconds: Double(end - start) / 1e9, startNanoseconds: start, durations: durations, failures: failures)
    }

    /// Splits `items` round-robin into `count` slices (writer `w` gets items `w`, `w + count`, ...).
    static func deal<Item>(_ items: [Item], into count: Int) -> [[Item]] {
        var slices = Array(repeating: [Item](), count: max(1, count))
        for (index, item) in items.enumerated() { slices[index % slices.count].append(item) }
        return slices
    }

    /// Results gathered from the writer threads.
    private final class Collected: Sendable {
        private let state = Mutex<(durations: [Double], failures: [String])>(([], []))

        func add(_ durations: [Double]) {
            state.withLock { $0.durations.append(contentsOf: durations) }
        }

        func fail(_ message: String) {
            state.withLock { if $0.failures.count < 5 { $0.failures.append(message) } }
        }

        var contents: ([Double], [String]) { state.withLock { ($0.durations, $0.failures) } }
    }
}

/// Seconds since `startNanoseconds` on the monotonic clock.
func secondsSince(_ startNanoseconds: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - startNanoseconds) / 1e9
}
