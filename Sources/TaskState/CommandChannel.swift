import FoundationEssentials

/// How programs other than the scheduler ask it for something: write a command into the inbox,
/// then wait for its outcome (when a scheduler is running to give one).
public struct CommandChannel: Sendable {
    public let paths: StatePaths

    public init(paths: StatePaths) {
        self.paths = paths
    }

    /// What became of a sent command.
    public enum Delivery: Sendable, Equatable {
        /// The scheduler applied it (or refused it: see the outcome's `error`).
        case applied(CommandOutcome)
        /// No scheduler is running; the command is durable in the inbox and will be applied at start.
        case queued
        /// A scheduler is running but did not answer in time; the command stays in the inbox.
        case noAnswer
    }

    /// The pid of the running scheduler, or `nil`.
    public var schedulerPID: Int32? { StateLock.holder(paths) }

    /// Hands the command to the running scheduler over its command socket and waits up to
    /// `timeout` for the committed outcome; when no scheduler listens, or it did not answer,
    /// makes the command durable in the inbox instead (and waits for its outcome there while a
    /// scheduler runs). Either way a command id is applied at most once.
    public func send(_ command: Command, timeout: TimeInterval = 10) throws(StateError) -> Delivery {
        try StateDirectoryCheck.prepare(paths.root)
        let started = Date()
        switch CommandSocketClient.send(command, paths: paths, timeout: timeout) {
        case .applied(let outcome):
            return .applied(outcome)
        case .unreachable:
            return try sendThroughInbox(command, timeout: timeout)
        case .timedOut:
            // A slow scheduler: the command is made durable, and it answers when it gets to it.
            if let outcome = CommandOutcome.stored(command.id, in: paths) { return .applied(outcome) }
            try Inbox(paths: paths).enqueue(command)
            return .noAnswer
        case .interrupted:
            // The scheduler ended while it had the command: committed or not, the inbox copy
            // makes it durable, and the outcome kept by id stops a second application.
            if let outcome = CommandOutcome.stored(command.id, in: paths) { return .applied(outcome) }
            return try sendThroughInbox(command, timeout: max(0, timeout - Date().timeIntervalSince(started)))
        }
    }

    /// The inbox path: the command is durable before anything waits; then its outcome file is
    /// awaited through inotify while a scheduler runs.
    private func sendThroughInbox(_ command: Command, timeout: TimeInterval) throws(StateError) -> Delivery {
        try StateFiles.ensureDirectory(paths.outcomes)
        // Watch before writing, so an answer that comes at once is not missed.
        let watcher = try ChangeWatcher()
        try watcher.watch(paths.outcomes, mask: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR))
        try Inbox(paths: paths).enqueue(command)
        guard schedulerPID != nil else { return .queued }
        return waitForOutcome(of: command.id, watcher: watcher, timeout: timeout)
    }

    /// Waits for `outcomes/<id>.json` to appear and reads it. A scheduler that dies meanwhile
    /// (seen through a pidfd, not by polling) leaves the command queued for the next one.
    public func waitForOutcome(of id: String, watcher: ChangeWatcher, timeout: TimeInterval) -> Delivery {
        let deadline = Date().addingTimeInterval(timeout)
        let scheduler = schedulerPID.map { bg_pidfd_open($0) } ?? -1
        defer { if scheduler >= 0 { close(scheduler) } }
        while true {
            if let outcome = CommandOutcome.stored(id, in: paths) { return .applied(outcome) }
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { return .noAnswer }
            var poll = KernelPoll<WaitSource>()
            poll.watch(.outcomes, watcher.descriptor)
            poll.watch(.schedulerExit, scheduler)
            let ready = poll.wait(milliseconds: Int32(min(remaining * 1000 + 1, Double(Int32.max)))) ?? []
            if ready.contains(.outcomes) { _ = watcher.drain() }
            if ready.contains(.schedulerExit) {
                if let outcome = CommandOutcome.stored(id, in: paths) { return .applied(outcome) }
                return .queued
            }
        }
    }
}

import CLinuxSupport
#if canImport(Glibc)
import Glibc
#endif

/// What ``CommandChannel`` waits on for an outcome.
private enum WaitSource: Hashable {
    /// `outcomes/` changed.
    case outcomes
    /// The scheduler's pidfd: it ended.
    case schedulerExit
}
