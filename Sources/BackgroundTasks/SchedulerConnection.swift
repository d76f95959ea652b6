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
        case .queued:
            throw .init(.unavailable, "bgtaskd stopped before answering; the command waits in the inbox for its next start")
        case .noAnswer:
            throw .init(.unavailable,
                        "bgtaskd did not answer within \(Int(Self.answerTimeout)) s; the command waits in the inbox")
        }
    }

    /// Sends `action` durably and, when a scheduler runs, waits for it to be applied; never throws.
    /// Used where Apple's API has no error to report (cancel, completion).
    @discardableResult
    func tell(_ action: CommandAction) -> CommandOutcome? {
        guard StateFiles.exists(context.paths.root) else { return nil }
        guard case .applied(let outcome) = try? CommandChannel(paths: context.paths)
            .send(command(action), timeout: Self.answerTimeout) else { return nil }
        return outcome
    }

    private func command(_ action: CommandAction) -> Command {
        Command(issuedAt: Date(), issuerPID: getpid(), action: action)
    }
}

#if canImport(Glibc)
import Glibc
#endif
