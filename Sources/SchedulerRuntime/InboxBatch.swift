import FoundationEssentials
import Logging
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The inbox side of a turn: commands are applied in batches, each batch one group commit, with
/// the poison-command guard naming what is in hand and expiries checked between commands.
extension SchedulerDaemon {
    /// Applies up to one batch of inbox commands. Returns whether more are waiting.
    func applyInboxBatch(now: Date) throws -> Bool {
        // Nothing can have come since the last listing took everything (``inboxListedWhole``), if
        // the folder at `inbox/new` is the one watched; otherwise it is listed every turn.
        let folder = StateFiles.identity(of: paths.inboxNew)
        if inboxListedWhole && folder != nil && folder == watchedInbox && suspects.isEmpty && !drainingStartupInbox
            && inboxListing.nextTry == nil {
            return false
        }
        inboxListedWhole = false
        let inbox = Inbox(paths: paths)
        let batchSize = 1024
        let names: [String]
        do {
            names = try inbox.waiting(limit: batchSize + 1)
            let recovered = inboxListing.succeeded()
            if recovered || (folder != nil && folder != watchedInbox) {
                // The folder listed may be a new one (the old one moved away or removed): a watch
                // follows a folder, not its name, so it is watched again.
                do {
                    try wait.watcher.watch(paths.inboxNew, mask: Self.inboxWatchMask)
                    watchedInbox = folder
                    logger.info(recovered ? "the inbox can be listed again" : "watching the new inbox folder")
                } catch {
                    logger.error("the inbox folder can be listed but not watched: \(error)")
                }
            }
        } catch {
            // Its commands wait where they are; everything else goes on (``InboxListingRetry``).
            if inboxListing.failed(at: now) {
                state.record(Event(time: now, type: .inboxUnreadable, reason: "\(error)",
                                   message: "cannot list the inbox (\(error)); its commands wait there, and it is listed again in a second, then less often"))
                logger.error("cannot list the inbox: \(error)")
            }
            return false
        }
        var applied: [String] = []
        var handled = 0
        defer {
            // From here to the end of the commit, the turn's commands are what is in hand.
            if !applied.isEmpty { poisonGuard.mark(.committing, commands: applied) }
        }
        var expiryDue = drainingStartupInbox ? nil : state.nextTaskDeadline(after: now)
        for name in names.prefix(batchSize) {
            if let due = expiryDue, Date() >= due {
                expireDueTasks(now: Date())
                expiryDue = state.nextTaskDeadline(after: now)
            }
            // A suspect of a crashed turn goes in a turn of its own, so a second crash names it alone.
            let isSuspect = suspects.remove(name) != nil
            if isSuspect && handled > 0 {
                suspects.insert(name)
                return true
            }
            handled += 1
            let path = inbox.path(of: name)
            let stem = String(name.dropLast(".json".count))
            if pendingOutcomeIDs.contains(stem) || StateFiles.exists(paths.outcome(stem)) {
                // Applied before a crash that came between the outcome and the inbox removal, or
                // answered already (from the command socket, or refused after a crash on it).
                consumedCommands.append(path)
                continue
            }
            poisonGuard.mark(.applying, commands: [name])
            applied.append(name)
            let command: Command
            do {
                command = try inbox.read(name)
                // The id names the outcome file: the documented alphabet (as the socket checks), and
                // the file's own name byte for byte (String's == takes K and U+212A for one).
                guard Command.isValidID(command.id) else {
                    throw StateError.malformed("command id '\(command.id)' is not 1 to 64 letters, digits, '.', '-', '_'")
                }
                guard command.id.utf8.elementsEqual(stem.utf8) else {
                    throw StateError.malformed("command id '\(command.id)' does not match its file name")
                }
            } catch {
                state.record(quarantine(path, reason: "\(error)", now: now, type: .commandRejected))
                if Command.isValidID(stem) {
                    queueOutcome(CommandOutcome(command: stem, type: nil, appliedAt: now,
                                                error: .init(.invalidCommand, message: "\(error)")), now: now)
                }
                continue
            }
            queueOutcome(applyCommand(command, now: now), now: now)
            consumedCommands.append(path)
            if isSuspect {
                logger.notice("applied suspect \(name) in a turn of its own")
                return true
            }
        }
        let whole = names.count <= batchSize
        // A suspect not in a whole listing is gone (or was a socket command): none is left to wait for.
        if whole { suspects.removeAll() }
        inboxListedWhole = whole && folder != nil && folder == watchedInbox
        return !whole
    }

    /// Applies one command (from the inbox or the command socket): the pid it wants signalled is
    /// vetted, a launch token checked, then the policy decides and its effects are carried out.
    /// Returns the outcome to commit.
    func applyCommand(_ command: Command, now: Date) -> CommandOutcome {
        // The pid a command wants signalled is checked first, against the kernel.
        let vetted = vetTarget(of: command, now: now)
        var result: CommandResult
        if let refusal = launchTokenRefusal(of: command) {
            result = state.refuse(command, refusal, now: now)
        } else if case .failure(let refusal) = vetted {
            result = state.refuse(command, .notAppProcess(refusal.description), now: now)
        } else {
            result = state.apply(command, now: now)
        }
        let process = try? vetted?.get()
        if result.outcome.error != nil, let process { close(process.pidfd) }
        let launches = carryOut(result.effects, now: now, command: CommandContext(process: process, issuedAt: command.issuedAt))
        if let plan = result.launch, let launched = launches.first {
            switch launched {
            case .success(let pid):
                let how = plan.handOver == nil ? "launched \(plan.app) (pid \(pid))" : "handed to running \(plan.app) (pid \(pid))"
                if case .push = command.action, let id = result.outcome.identifier {
                    result.outcome.message = "delivered \(id): \(how)"
                } else {
                    result.outcome.message = "\(how) for \(plan.requests.map(\.identifier.rawValue).joined(separator: " "))"
                }
            case .failure(let error):
                if case .push = command.action, let id = result.outcome.identifier {
                    // Applied all the same: the push was received, then dropped (an event says so).
                    result.outcome.message = "dropped \(id): \(error.message)"
                } else {
                    result.outcome.error = error.refusal
                }
            }
        }
        return result.outcome
    }
}
