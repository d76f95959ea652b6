import FoundationEssentials
import Glibc
import Synchronization
import TaskState

/// Sends the dashboard's commands without blocking the screen: each is written and awaited on a
/// background thread, and its result comes back through a pipe the main loop polls.
final class CommandDispatch: Sendable {
    /// What became of one command, in the words of the status line.
    struct StatusReport: Sendable {
        var text: String
        var isError: Bool
    }

    private let channel: CommandChannel
    private let results = Mutex<[StatusReport]>([])
    private let wakePipe: WakePipe

    init(paths: StatePaths) throws {
        channel = CommandChannel(paths: paths)
        wakePipe = try WakePipe()
    }

    /// The descriptor that becomes readable when results are waiting.
    var descriptor: Int32 { wakePipe.readEnd }

    func send(_ action: CommandAction, summary: String) {
        let command = Command(issuedAt: Date(), issuerPID: getpid(), action: action)
        DetachedThread.start(name: "bgtop command") { [self] in
            let result: StatusReport
            do {
                switch try channel.send(command, timeout: 5) {
                case .applied(let outcome):
                    if let error = outcome.error {
                        result = StatusReport(text: "\(summary): \(error.name): \(error.message)", isError: true)
                    } else {
                        result = StatusReport(text: outcome.message ?? "\(summary): done", isError: false)
                    }
                case .queued:
                    result = StatusReport(text: "\(summary): queued; bgtaskd is not running", isError: true)
                case .noAnswer:
                    result = StatusReport(text: "\(summary): bgtaskd did not answer within 5 s", isError: true)
                }
            } catch {
                result = StatusReport(text: "\(summary): \(error)", isError: true)
            }
            results.withLock { $0.append(result) }
            wakePipe.wake()
        }
    }

    /// Takes the results that arrived.
    func take() -> [StatusReport] {
        wakePipe.drain()
        return results.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}
