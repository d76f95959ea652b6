import Foundation
import Synchronization
import TaskState

/// Answers the log pager's reads off the main loop: each is read on a background thread (a search
/// may look through hundreds of megabytes) and its answer comes back through a pipe the loop
/// polls, as an answer from another host would.
final class LogReads: Sendable {
    private let paths: StatePaths
    private let answers = Mutex<[LogExcerpt]>([])
    private let wakePipe: WakePipe

    init(paths: StatePaths) throws {
        self.paths = paths
        wakePipe = try WakePipe()
    }

    /// The descriptor that becomes readable when answers are waiting.
    var descriptor: Int32 { wakePipe.readEnd }

    func read(_ request: LogRequest) {
        Thread.detachNewThread { [self] in
            let excerpt = LogReader.read(request, paths: paths)
            answers.withLock { $0.append(excerpt) }
            wakePipe.wake()
        }
    }

    /// Takes the answers that arrived.
    func take() -> [LogExcerpt] {
        wakePipe.drain()
        return answers.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
    }
}
