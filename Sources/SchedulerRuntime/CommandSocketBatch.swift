import FoundationEssentials
import Logging
import SchedulerCore
import TaskState

/// The command socket's side of a turn: its commands are applied with the inbox's, in batches that
/// each end in a group commit; each client is answered once its command's commit is durable.
extension SchedulerDaemon {
    /// Commands applied per batch, as for the inbox.
    static let socketBatchSize = 1024

    /// Listens on `control.sock`; without it (a file of another kind there, a path too long for
    /// a socket) clients use the inbox, which always works.
    func openCommandSocket() -> CommandSocket? {
        do {
            return try CommandSocket(path: paths.controlSocket)
        } catch {
            logger.warning("no command socket: \(TerminalText.escaped("\(error)")); commands come through the inbox only")
            return nil
        }
    }

    /// Reads what the ready descriptors of the command socket hold.
    func receiveSocketCommands(_ ready: [Int32]) {
        guard let commandSocket, !ready.isEmpty else { return }
        socketMessages.append(contentsOf: commandSocket.receive(ready: ready))
    }

    /// Applies up to one batch of the socket's commands. Returns whether more are waiting.
    func applySocketBatch(now: Date) -> Bool {
        guard let commandSocket, !socketMessages.isEmpty else { return false }
        let batch = socketMessages.prefix(Self.socketBatchSize)
        socketMessages.removeFirst(batch.count)
        var expiryDue = drainingStartupInbox ? nil : state.nextTaskDeadline(after: now)
        var inHand: [String] = []
        defer {
            // As for the inbox: a crash from here to the end of the commit names these commands.
            if !inHand.isEmpty { poisonGuard.mark(.committing, commands: inHand) }
        }
        var unnamed: (count: Int, first: String?) = (0, nil)
        defer {
            if let first = unnamed.first {
                let more = unnamed.count > 1 ? " (and \(unnamed.count - 1) more like it in this batch)" : ""
                state.record(Event(time: now, type: .commandRejected, reason: "command socket: \(first)",
                                   message: "a message on the command socket was not a command: \(first)\(more)"))
            }
        }
        for message in batch {
            if let due = expiryDue, Date() >= due {
                expireDueTasks(now: Date())
                expiryDue = state.nextTaskDeadline(after: now)
            }
            switch message {
            case .malformed(let reason, let id, let connection):
                guard let id else {
                    // Nothing to answer: the connection ends, and the batch's event counts them
                    // (a client sending nonsense in a loop costs one event per batch, not one each).
                    unnamed.count += 1
                    if unnamed.first == nil { unnamed.first = reason }
                    commandSocket.end(connection)
                    continue
                }
                state.record(Event(time: now, type: .commandRejected, command: id, reason: "command socket: \(reason)",
                                   message: "command \(id) on the command socket was rejected: \(reason)"))
                if !isKnown(id, connection: connection, socket: commandSocket) {
                    queueOutcome(CommandOutcome(command: id, type: nil, appliedAt: now,
                                                error: .init(.invalidCommand, message: reason)), now: now)
                    commandSocket.await(id, on: connection)
                }
            case .command(let command, let connection):
                if isKnown(command.id, connection: connection, socket: commandSocket) { continue }
                let name = PoisonGuard.socketName(command.id)
                poisonGuard.mark(.applying, commands: [name])
                inHand.append(name)
                queueOutcome(applyCommand(command, now: now), now: now)
                commandSocket.await(command.id, on: connection)
            }
        }
        return !socketMessages.isEmpty
    }

    /// Whether command `id` was applied before (its outcome is committed, or waits for this
    /// turn's commit): a client that resent it is answered with that outcome, and it is not
    /// applied again.
    private func isKnown(_ id: String, connection: CommandSocket.Connection, socket: CommandSocket) -> Bool {
        if pendingOutcomeIDs.contains(id) {
            socket.await(id, on: connection)
            return true
        }
        guard StateFiles.exists(paths.outcome(id)) else { return false }
        if let outcome = CommandOutcome.stored(id, in: paths) {
            socket.answerNow(outcome, on: connection)
        } else {
            socket.end(connection)
        }
        return true
    }
}
