import FoundationEssentials
import Glibc
import StateFeed
import Synchronization
import TaskState

/// Carries the `command` requests of `bgctl watch --json` to the scheduler the way `bgctl` sends
/// its own commands, without stopping the feed: each one is written and awaited on a thread of
/// its own, a few at a time, and its ``FeedResult`` comes back through a pipe the watch polls.
final class WatchCommandRunner: Sendable {
    /// Commands waiting for the scheduler at once; one more is refused as `busy`, so a peer that
    /// floods requests cannot start threads without bound.
    static let maximumInFlight = 4
    /// How long a command waits for the scheduler's outcome, as `bgctl`'s default.
    static let timeout: TimeInterval = 10

    private let paths: StatePaths
    private let configDirectory: String
    private let launchToken: LaunchToken?
    private let state = Mutex<(inFlight: Int, results: [FeedResult])>((0, []))
    private let wakePipe: WakePipe

    init(locations: LocationOptions, launchToken: LaunchToken?) throws {
        paths = locations.paths
        configDirectory = locations.configDirectory
        self.launchToken = launchToken
        wakePipe = try WakePipe()
    }

    /// Commands sent and not answered yet (their results not taken).
    var inFlight: Int { state.withLock { $0.inFlight + $0.results.count } }

    /// Readable when results are waiting.
    var descriptor: Int32 { wakePipe.readEnd }

    /// Starts sending `action`; false when too many commands are already on their way.
    func submit(id: String?, action: CommandAction) -> Bool {
        let admitted = state.withLock { current in
            guard current.inFlight < Self.maximumInFlight else { return false }
            current.inFlight += 1
            return true
        }
        guard admitted else { return false }
        let command = Command(issuedAt: Date(), issuerPID: getpid(), launchToken: launchToken, action: action)
        DetachedThread.start { [self] in
            let result = deliver(command, id: id)
            state.withLock { current in
                current.inFlight -= 1
                current.results.append(result)
            }
            wakePipe.wake()
        }
        return true
    }

    /// The results that arrived.
    func take() -> [FeedResult] {
        wakePipe.drain()
        return state.withLock { current in
            defer { current.results.removeAll() }
            return current.results
        }
    }

    /// What `bgctl` does for one command, as a result line instead of output and an exit code.
    private func deliver(_ command: Command, id: String?) -> FeedResult {
        let now = Date()
        if let problem = command.outOfBounds(now: now) {
            return FeedResult(id: id, status: .refused, error: .init(name: RefusalCode.invalidCommand.rawValue, message: problem.description))
        }
        let channel = CommandChannel(paths: paths)
        if channel.schedulerPID == nil {
            do {
                if let refusal = try CommandSender.offlineRefusal(command, paths: paths, configDirectory: configDirectory, now: now) {
                    return FeedResult(id: id, status: .refused, error: refusal)
                }
            } catch {
                return FeedResult(id: id, status: .refused, error: .init(name: "badSettings", message: "bad settings file \(error)"))
            }
        }
        do {
            switch try channel.send(command, timeout: Self.timeout) {
            case .applied(let outcome):
                if let error = outcome.error { return FeedResult(id: id, status: .refused, error: error) }
                return FeedResult(id: id, status: .applied, message: outcome.message)
            case .queued:
                return FeedResult(id: id, status: .queued, message: "bgtaskd is not running; the command will be applied when it starts")
            case .noAnswer:
                return FeedResult(id: id, status: .noAnswer,
                                  message: "bgtaskd did not answer within \(Int(Self.timeout)) s; the command stays queued")
            }
        } catch {
            return FeedResult(id: id, status: .refused, error: .init(name: "stateDirectory", message: error.description))
        }
    }
}
