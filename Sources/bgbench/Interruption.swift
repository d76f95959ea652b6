import ArgumentParser
import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Cleans up when the run is cut short: Ctrl-C, SIGTERM or SIGHUP stop the schedulers this run
/// started and remove its folder; a closed stdout (`bgbench | head`) is ignored so the run still
/// ends normally and cleans up after itself.
enum Interruption {
    /// What there is to clean up.
    private static let registry = Mutex<(root: String?, schedulers: Set<Int32>)>((nil, []))
    /// Set when a signal arrived: what the run sees fail from then on is the cleaning up.
    private static let interrupted = Atomic<Bool>(false)
    /// More to do before the folder goes (the torture campaign ends its scheduler and apps).
    private static let extra = Mutex<(@Sendable () -> Void)?>(nil)

    /// Installs the handlers; keep the returned sources alive for the whole run.
    static func install() -> [any DispatchSourceSignal] {
        signal(SIGPIPE, SIG_IGN)
        return [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                interrupted.store(true, ordering: .sequentiallyConsistent)
                cleanUp()
                Console.error("interrupted; stopped bgtaskd and removed the benchmark folder")
                exit(128 + number)
            }
            source.resume()
            return source
        }
    }

    /// The run's folder, removed on interruption (`nil`: keep it).
    static func register(root: String?) {
        registry.withLock { $0.root = root }
    }

    /// Something to run on interruption before the folder is removed.
    static func register(cleanUp: @escaping @Sendable () -> Void) {
        extra.withLock { $0 = cleanUp }
    }

    /// Whether a signal cut the run short; the handler ends the process once it has cleaned up.
    static var isInterrupted: Bool { interrupted.load(ordering: .sequentiallyConsistent) }

    static func started(scheduler pid: Int32) {
        registry.withLock { _ = $0.schedulers.insert(pid) }
    }

    static func stopped(scheduler pid: Int32) {
        registry.withLock { _ = $0.schedulers.remove(pid) }
    }

    private static func cleanUp() {
        let (root, schedulers) = registry.withLock { ($0.root, $0.schedulers) }
        for pid in schedulers { kill(pid, SIGTERM) }
        // Give them a moment to commit and exit before their folder goes.
        for _ in 0..<50 where schedulers.contains(where: { kill($0, 0) == 0 }) { usleep(20_000) }
        extra.withLock { $0 }?()
        if let root { Workspace.removeTree(root) }
    }
}

/// A benchmark that cleans up after itself when interrupted, and reports its own errors in one line.
protocol InterruptibleBench: ParsableCommand {
    func measure() throws
}

extension InterruptibleBench {
    func run() throws {
        let handlers = Interruption.install()
        defer { withExtendedLifetime(handlers) {} }
        do {
            try measure()
        } catch let error as BenchError {
            // A failure caused by the cleaning up (bgtaskd stopped, say) is not the run's: the
            // handler says "interrupted" and exits once it is done.
            while Interruption.isInterrupted { pause() }
            Console.error(error.description)
            throw ExitCode.failure
        }
    }
}
