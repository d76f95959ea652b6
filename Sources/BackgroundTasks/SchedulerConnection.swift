import Foundation
import TaskState

/// Sends this app's commands to the scheduler through the inbox.
struct SchedulerConnection: Sendable {
    let context: AppContext

    /// How long a call that needs the scheduler's answer waits for it.
    static let answerTimeout: TimeInterval = 5

    /// Whether a scheduler holds the state directory's lock.
    var schedulerIsRunning: Bool { StateLock.holder(context.paths) != nil }

    /// Sends `action` and returns the scheduler's outcome. Refuses at once, without queueing
    /// anything, when the state directory is unusable or no scheduler runs: an app must not wait on
    /// a scheduler that is not there.
    func request(_ action: CommandAction) throws(BGTaskScheduler.Error) -> CommandOutcome {
        guard let outcome = try requestAllowingQueue(action) else {
            throw .init(.unavailable, "bgtaskd did not answer within \(Int(Self.answerTimeout)) s; the command waits in the inbox")
        }
        return outcome
    }

    /// ``request(_:)``, except that a command the scheduler has not answered (it is slow, or it
    /// stopped after the command was written) is `nil`: it waits in the inbox and will be applied.
    func requestAllowingQueue(_ action: CommandAction) throws(BGTaskScheduler.Error) -> CommandOutcome? {
        guard StateFiles.exists(context.paths.root) else {
            throw .init(.unavailable, "the state directory \(context.paths.root) does not exist; start bgtaskd")
        }
        guard schedulerIsRunning else {
            throw .init(.unavailable, "bgtaskd is not running on \(context.paths.root)")
        }
        let delivery: CommandChannel.Delivery
        do {
            delivery = try CommandChannel(paths: context.paths).send(command(action), timeout: Self.answerTimeout)
        } catch {
            throw .init(.unavailable, "cannot reach the scheduler: \(error)")
        }
        switch delivery {
        case .applied(let outcome):
            if let refusal = outcome.error { throw .init(refusal: refusal) }
            return outcome
        case .queued, .noAnswer:
            return nil
        }
    }

    /// Makes `action` durable in the inbox on the caller's thread; never throws. Once this
    /// returns the command survives the process exiting, and a scheduler applies it even if it
    /// learns of the exit in the same moment. `nil` when the state directory cannot take it.
    func enqueue(_ action: CommandAction) -> Command? {
        guard StateFiles.exists(context.paths.root) else { return nil }
        let command = command(action)
        do {
            try Inbox(paths: context.paths).enqueue(command)
            return command
        } catch {
            return nil
        }
    }

    /// Waits for the outcome of an enqueued command while a scheduler runs; `nil` when none runs
    /// or it does not answer in time.
    func outcome(of command: Command) -> CommandOutcome? {
        guard schedulerIsRunning, let watcher = try? ChangeWatcher(),
              (try? watcher.watch(context.paths.outcomes, mask: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR))) != nil,
              case .applied(let outcome) = CommandChannel(paths: context.paths)
                .waitForOutcome(of: command.id, watcher: watcher, timeout: Self.answerTimeout) else { return nil }
        return outcome
    }

    /// Sends `action` durably and waits for it to be applied; never throws. Used where Apple's
    /// API has no error to report.
    @discardableResult
    func tell(_ action: CommandAction) -> CommandOutcome? {
        enqueue(action).flatMap(outcome(of:))
    }

    private func command(_ action: CommandAction) -> Command {
        Command(issuedAt: Date(), issuerPID: getpid(), launchToken: context.launchToken, action: action)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Runs `work`, which may wait on the scheduler or on files, on a Dispatch thread, so an async
/// caller never holds one of the cooperative pool's few threads while it waits.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: work()) }
    }
}
