import Foundation
import Synchronization
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Load for a phase that measures something else: durable submits at a steady rate, each one a
/// command in the inbox and a group commit in `bgtaskd`, as apps streaming requests would cause.
/// The requests are for a day later, so they only ever wait.
final class StreamingSubmits: Sendable {
    /// The app the stream submits for; add ``benchApp`` to the session's manifests.
    static let app = try! Identifier(validating: "bench.stream")
    static let identifiers = (0..<10).map { try! Identifier(validating: "bench.stream.r\($0)") }
    static var benchApp: BenchApp { BenchApp(id: app, identifiers: identifiers, modes: ["processing"], executable: "/bin/true") }

    private let stopped = Mutex(false)
    private let count = Mutex(0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts submitting `rate` requests per second to the scheduler on `paths` until ``stop()``.
    init(paths: StatePaths, rate: Double) {
        let interval = 1 / rate
        let thread = Thread { [self] in
            let inbox = Inbox(paths: paths)
            let start = Date()
            var index = 0
            while !stopped.withLock({ $0 }) {
                BareTimer.sleep(until: start.addingTimeInterval(Double(index) * interval))
                let request = SubmitRequest(app: Self.app, identifier: Self.identifiers[index % Self.identifiers.count],
                                            kind: .processing, earliestBeginDate: Date().addingTimeInterval(86_400))
                if (try? inbox.enqueue(Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request)))) != nil {
                    count.withLock { $0 += 1 }
                }
                index += 1
            }
            finished.signal()
        }
        thread.name = "bgbench streaming submits"
        thread.start()
    }

    /// Stops the stream; returns how many submits it made.
    func stop() -> Int {
        stopped.withLock { $0 = true }
        finished.wait()
        return count.withLock { $0 }
    }
}

/// The peer for deadline lateness: a thread of an ordinary process that sleeps until each deadline
/// (`clock_nanosleep`, absolute, on the wall clock) and notes how late it woke. Run beside the
/// scheduler under the same load, it is the floor any user-space timer meets on this machine.
final class BareTimer: Sendable {
    private let samples = Mutex<[Double]>([])
    private let finished = DispatchSemaphore(value: 0)

    init(deadlines: [Date]) {
        let thread = Thread { [self] in
            for deadline in deadlines.sorted() {
                Self.sleep(until: deadline)
                let late = Date().timeIntervalSince(deadline)
                samples.withLock { $0.append(late) }
            }
            finished.signal()
        }
        thread.name = "bgbench bare timer"
        thread.start()
    }

    /// Waits for the last deadline; returns the lateness of each wake-up.
    func lateness() -> Samples {
        finished.wait()
        return Samples(samples.withLock { $0 })
    }

    static func sleep(until date: Date) {
        let seconds = date.timeIntervalSince1970
        guard seconds > Date().timeIntervalSince1970 else { return }
        var target = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &target, nil) == EINTR {}
    }
}
