import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The measurement behind `maxConcurrentLaunches`' default: a coalesced burst of handlers, each a
/// real process burning a fixed amount of CPU, started at most `concurrency` at a time, while a
/// foreground thread (the person's program) sleeps 10 ms at a time and notes how late it wakes.
/// Starting more handlers than the machine has cores does not finish the burst sooner; it only
/// makes the foreground wait.
struct LaunchBurst {
    struct Result: Sendable {
        var concurrency: Int
        /// From the first start to the last exit, in seconds.
        var makespan: Double
        /// How late the foreground thread woke, in seconds.
        var foreground: Samples
        /// Handlers that did not exit 0.
        var failures: Int
    }

    let handlers: Int
    /// Iterations of the shell loop each handler runs (about 0.1–0.3 s of CPU on this kind of machine).
    let work: Int
    let scratch: String

    func run(concurrency: Int) throws -> Result {
        let slots = DispatchSemaphore(value: concurrency)
        let group = DispatchGroup()
        let failures = Mutex(0)
        let probe = ForegroundProbe()
        let started = Date()
        for _ in 0..<handlers {
            slots.wait()
            group.enter()
            Thread.detachNewThread { [work, scratch] in
                defer {
                    slots.signal()
                    group.leave()
                }
                let script = "i=0; while [ $i -lt \(work) ]; do i=$((i+1)); done"
                let ending = try? TimedProcess.run("sh", ["-c", script], timeout: 120, scratch: scratch)
                if ending?.status != 0 || ending?.timedOut != false { failures.withLock { $0 += 1 } }
            }
        }
        group.wait()
        let makespan = Date().timeIntervalSince(started)
        return Result(concurrency: concurrency, makespan: makespan, foreground: probe.stop(),
                      failures: failures.withLock { $0 })
    }
}

/// A thread that sleeps 10 ms at a time until stopped, noting how late each wake-up is.
final class ForegroundProbe: Sendable {
    private let stopped = Mutex(false)
    private let samples = Mutex<[Double]>([])
    private let finished = DispatchSemaphore(value: 0)

    init() {
        let thread = Thread { [self] in
            var next = Date().addingTimeInterval(0.01)
            while !stopped.withLock({ $0 }) {
                BareTimer.sleep(until: next)
                let late = Date().timeIntervalSince(next)
                samples.withLock { $0.append(late) }
                next = max(next.addingTimeInterval(0.01), Date())
            }
            finished.signal()
        }
        thread.name = "bgbench foreground probe"
        thread.start()
    }

    /// Stops the thread; returns the lateness of its wake-ups.
    func stop() -> Samples {
        stopped.withLock { $0 = true }
        finished.wait()
        return Samples(samples.withLock { $0 })
    }
}
