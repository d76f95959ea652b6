import Foundation
import Synchronization
import TaskState

/// Sends the dashboard's commands without blocking the screen: each is written and awaited on a
/// background thread, and its result comes back through a pipe the main loop polls.
final class CommandDispatch: Sendable {
    /// The outcome of one command, in the words for the status line.
    struct Result: Sendable {
        var text: String
        var isError: Bool
    }

    private let channel: CommandChannel
    private let results = Mutex<[Result]>([])
    private let wakePipe: WakePipe

    init(paths: StatePaths) throws {
        channel = CommandChannel(paths: paths)
        wakePipe = try WakePipe()
    }

    /// The descriptor that becomes readable when results are waiting.
    var descriptor: Int32 { wakePipe.readEnd }

    func send(_ action: CommandAction, summary: String) {
        let command = Command(issuedAt: Date(), issuerPID: getpid(), action: action)
        Thread.detachNewThread { [self] in
            let result: Result
            do {
                switch try channel.send(command, timeout: 5) {
                case .applied(let outcome):
                    if let error = outcome.error {
                        result = Result(text: "\(summary): \(error.name): \(error.message)", isError: true)
                    } else {
                        result = Result(text: outcome.message ?? "\(summary): done", isError: false)
                    }
                case .queued:
                    result = Result(text: "\(summary): queued; bgtaskd is not running", isError: true)
                case .noAnswer:
                    result = Result(text: "\(summary): bgtaskd did not answer within 5 s", isError: true)
                }
            } catch {
                result = Result(text: "\(summary): \(error)", isError: true)
            }
            results.withLock { $0.append(result) }
            wakePipe.wake()
        }
    }

    /// Takes the results that arrived.
    func take() -> [Result] {
        wakePipe.drain()
        return results.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}
