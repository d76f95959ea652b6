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
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(paths: StatePaths) throws {
        channel = CommandChannel(paths: paths)
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw StateError.system(operation: "cannot create pipe for", path: "bgtop", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    /// The descriptor that becomes readable when results are waiting.
    var descriptor: Int32 { wakeRead }

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
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    /// Takes the results that arrived.
    func take() -> [Result] {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(wakeRead, &buffer, buffer.count) > 0 {}
        return results.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
}
