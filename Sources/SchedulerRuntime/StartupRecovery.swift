import FoundationEssentials
import Logging
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// What a scheduler does at start-up about what the previous one left: its processes, the
/// commands it had in hand when it crashed (``PoisonGuard``), half-written inbox files, and the
/// outcomes still to expire.
extension SchedulerDaemon {
    /// Takes over what the previous scheduler's processes are doing: adopts live tasks and
    /// attachments, and sees that no process it started runs on unsupervised (see
    /// `ProcessSupervision`). Kills decided here go out after the first commit.
    func takeOverProcesses(now: Date, lastCommitAt: Date?) {
        goneAtStart = state.adoptTasks(now: now, isAlive: ProcessLauncher.isAlive)
        state.adoptAttachments(now: now) { ProcessLauncher.isAlive(pid: $0.pid, startTicks: $0.processStartTicks) }
        processActions += state.takeOverProcesses(found: MarkedProcessScan.scan(stateRoot: paths.root), now: now,
                                                  lastCommitAt: lastCommitAt) {
            ProcessLauncher.isAlive(pid: $0.pid, startTicks: $0.processStartTicks)
        }
        processActions += state.resumeLeftoverEndings(now: now)
        for pid in state.watchedPIDs.subtracting(goneAtStart) { wait.watchExit(of: pid) }
        holdAdoptedProcesses()
    }

    /// Replays the commits a crash left in the journal; returns the events that say what was set aside.
    ///
    /// A journal that cannot be replayed because of the machine or the state directory (a full
    /// disk, an I/O or permission error, a file where a folder belongs) stops the start with the
    /// journal untouched: its batches were acknowledged, and the next start replays them once the
    /// cause is fixed. Only a journal this program cannot read (a batch that does not decode, a
    /// path outside the state directory) is kept aside, durably, before it is emptied.
    static func replayJournal(_ committer: GroupCommit, paths: StatePaths, logger: Logger, now: Date) throws(StateError) -> [Event] {
        let kept = "\(paths.quarantine)/\(JSONFormat.string(from: now).replacingLiterally(":", with: ""))-journal.json"
        do {
            let recovery = try committer.replayJournal()
            if recovery.replayed > 0 { logger.notice("replayed \(recovery.replayed) batch(es) of the journal") }
            guard let bytes = recovery.dropped else { return [] }
            // A batch whose journal write a crash cut short: none of its commands had been
            // acknowledged, and all of them are still in the inbox. Kept aside for inspection.
            try? StateFiles.write(bytes, to: kept, durable: false)
            return [Event(time: now, type: .quarantined, reason: "journal",
                          message: "journal.json held a batch cut short by a crash; dropped it (copy in \(kept))")]
        } catch let error as StateError {
            guard case .malformed = error else { throw error }
            return try setJournalAside(committer, paths: paths, kept: kept, error: error, now: now)
        } catch {
            return try setJournalAside(committer, paths: paths, kept: kept, error: error, now: now)
        }
    }

    private static func setJournalAside(_ committer: GroupCommit, paths: StatePaths, kept: String, error: any Error,
                                        now: Date) throws(StateError) -> [Event] {
        // Up to its last byte that is not zero: not the zeros kept after the records.
        let bytes = try committer.journal.usedBytes()
        try StateFiles.ensureDirectory(paths.quarantine)
        try StateFiles.write(bytes, to: kept, durable: true)
        // Batches applied before the one that failed are made durable before the journal goes.
        try committer.journal.syncFileSystem()
        try committer.journal.clear()
        return [Event(time: now, type: .quarantined, reason: "journal",
                      message: "journal.json could not be replayed (\(error)); copy in \(kept)")]
    }

    /// Acts on what the previous scheduler had in hand when it died (see ``PoisonGuard``).
    func takeLeftover(_ leftover: PoisonGuard.Leftover, now: Date) {
        guard let signal = leftover.signal else {
            // Killed, not crashed: nothing to blame the commands for; they are applied as usual.
            return
        }
        if leftover.phase == .applying || leftover.commands.count == 1 {
            for name in leftover.commands { setAside(name, signal: signal, now: now) }
            return
        }
        suspects = Set(leftover.commands)
        logger.warning("bgtaskd crashed (signal \(signal)) committing a turn of \(leftover.commands.count) commands; each is applied again as a suspect in a turn of its own")
    }

    /// Quarantines an inbox file the previous scheduler crashed on, and answers it.
    func setAside(_ name: String, signal: Int32, now: Date) {
        let socketPrefix = PoisonGuard.socketName("")
        if name.hasPrefix(socketPrefix) {
            // Nothing to quarantine: the id is refused, so the copy its client writes into the
            // inbox is consumed unapplied.
            let id = String(name.dropFirst(socketPrefix.count))
            guard Command.isValidID(id), !StateFiles.exists(paths.outcome(id)) else { return }
            let reason = "bgtaskd crashed (signal \(signal)) while applying this command from the command socket; refused so that it cannot crash it again"
            state.record(Event(time: now, type: .commandRejected, command: id, reason: "crashed",
                               message: "command \(id): \(reason)"))
            queueOutcome(CommandOutcome(command: id, type: nil, appliedAt: now, error: .init(.invalidCommand, message: reason)), now: now)
            return
        }
        let path = Inbox(paths: paths).path(of: name)
        let stem = name.hasSuffix(".json") ? String(name.dropLast(".json".count)) : name
        guard !name.contains("/"), StateFiles.exists(path), !StateFiles.exists(paths.outcome(stem)) else { return }
        let reason = "bgtaskd crashed (signal \(signal)) while applying this command; set aside so that it cannot crash it again"
        state.record(quarantine(path, reason: reason, now: now, type: .commandRejected))
        if Command.isValidID(stem) {
            queueOutcome(CommandOutcome(command: stem, type: nil, appliedAt: now,
                                        error: .init(.invalidCommand, message: reason)), now: now)
        }
    }

    /// A writer that died between creating `inbox/tmp/<id>` and renaming it never acknowledged
    /// the command; after an hour the half-written file is removed.
    func removeAbandonedInboxFiles(now: Date) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: paths.inboxTemporary)) ?? [] {
            let path = "\(paths.inboxTemporary)/\(name)"
            var info = stat()
            guard lstat(path, &info) == 0, now.timeIntervalSince1970 - TimeInterval(info.st_mtim.tv_sec) > 3600 else { continue }
            try? StateFiles.remove(path)
        }
    }
}
