import FoundationEssentials
import Synchronization
import TaskState

/// Answers the log pager's reads off the main loop: each is read on a background thread (a search
/// may look through hundreds of megabytes) and its answer comes back through a pipe the loop
/// polls. `bgtop` answers its own pager with it, and `bgctl watch --json` the pager of a
/// `bgtop --host`.
public final class LogReads: Sendable {
    private let paths: StatePaths
    private let answers = Mutex<[(id: String?, excerpt: LogExcerpt)]>([])
    private let wakePipe: WakePipe

    public init(paths: StatePaths) throws {
        self.paths = paths
        wakePipe = try WakePipe()
    }

    /// The descriptor that becomes readable when answers are waiting.
    public var descriptor: Int32 { wakePipe.readEnd }

    /// Reads `request` on a thread of its own; `id` (a feed request's) comes back with the answer.
    public func read(_ request: LogRequest, id: String? = nil) {
        DetachedThread.start { [self] in
            let excerpt = LogReader.read(request, paths: paths)
            answers.withLock { $0.append((id, excerpt)) }
            wakePipe.wake()
        }
    }

    /// Takes the answers that arrived, each with the id its read was given.
    public func take() -> [(id: String?, excerpt: LogExcerpt)] {
        wakePipe.drain()
        return answers.withLock { waiting in
            defer { waiting.removeAll() }
            return waiting
        }
    }
}
