import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization
import TaskState

/// What one `bgctl batch` line comes to.
enum BatchLine: Sendable {
    case action(CommandAction)
    /// The line's one-line reason, printed as `line N: REASON; nothing was sent`.
    case refused(String)
    /// An exit asked for by the line's command itself.
    case exit(ExitCode)

    /// Parses each line's words as a `bgctl` command line, on several threads.
    ///
    /// swift-argument-parser builds a command's argument set anew, with reflection, for every
    /// line it parses: about 0.7 ms a `submit` line, most of a long batch's time. The lines do not
    /// depend on each other, so they are parsed side by side; the results keep the lines' order.
    static func parse(_ lines: [[String]], now: Date) -> [BatchLine] {
        let workers = min(max(1, lines.count / minimumLinesPerWorker), processorCount)
        if workers == 1 { return lines.map { parse($0, now: now) } }
        let results = Mutex([[BatchLine]](repeating: [], count: workers))
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            let range = slice(worker, of: workers, count: lines.count)
            let parsed = lines[range].map { parse($0, now: now) }
            results.withLock { $0[worker] = parsed }
        }
        return results.withLock { $0.flatMap { $0 } }
    }

    /// Below this many lines a thread of its own costs more than it saves.
    static let minimumLinesPerWorker = 32

    private static var processorCount: Int { max(1, min(8, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))) }

    /// The `worker`-th of `workers` contiguous slices of `0..<count`.
    static func slice(_ worker: Int, of workers: Int, count: Int) -> Range<Int> {
        (count * worker / workers)..<(count * (worker + 1) / workers)
    }

    private static func parse(_ words: [String], now: Date) -> BatchLine {
        do {
            guard let parsed = try BGCtl.parseAsRoot(words) as? BatchableCommand else {
                return .refused("only submit, cancel and complete go in a batch")
            }
            return .action(try parsed.action(now: now))
        } catch let exit as ExitCode {
            return .exit(exit)
        } catch where BGCtl.exitCode(for: error) == .success {
            // A request to print that the checks before parsing do not name.
            return .refused("help and version requests are not taken on a batch line")
        } catch {
            return .refused(BGCtl.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)")
        }
    }
}
