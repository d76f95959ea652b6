import FoundationEssentials
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Makes a batch of changes durable with one `fdatasync`, however many files it touches.
///
/// The batch's new file contents, removals, events and consumed inbox commands are appended to
/// `journal.json` (one `fdatasync`, see ``JournalFile``); that is the moment the batch is durable.
/// Then the files are written without syncing, the events appended and the inbox commands removed.
/// The `syncfs` that makes those files durable on their own, after which the journal is emptied
/// (the *checkpoint*, see ``JournalCheckpoint``), comes later and covers many batches. A crash
/// anywhere replays every whole batch in the journal at start-up, in order; replaying is
/// idempotent, and each batch cuts the event log back to its recorded size first so no event is
/// written twice.
struct GroupCommit {
    let paths: StatePaths
    let settings: SchedulerSettings
    let journal: JournalFile

    init(paths: StatePaths, settings: SchedulerSettings) throws(StateError) {
        self.paths = paths
        self.settings = settings
        journal = try JournalFile(path: paths.journal)
    }

    /// What one commit writes. Paths are relative to the state directory.
    struct Batch: Codable {
        var format = JSONFormat.version
        var writes: [Write] = []
        var removals: [String] = []
        var events: String = ""
        var eventLogOffset = 0
        var consumedCommands: [String] = []
        /// Files that go with removed records but are not state (an upload's kept answer): removed
        /// after the rest, a failure ignored, so a planted directory cannot stop a commit.
        var leftovers: [String]?
        /// Each outcome of the batch as its file holds it, by command id: what the command
        /// socket answers, encoded once. Not journaled (the journal has the files).
        var outcomeMessages: [(command: String, message: Data)] = []

        private enum CodingKeys: String, CodingKey {
            case format, writes, removals, events, eventLogOffset, consumedCommands, leftovers
        }

        struct Write: Codable {
            var path: String
            var contents: String
        }

        var isEmpty: Bool { writes.isEmpty && removals.isEmpty && events.isEmpty && consumedCommands.isEmpty }
    }

    /// Turns the state's changes, outcomes and consumed commands into a batch.
    func batch(state: SchedulerState, changes: ChangeSet, outcomes: [CommandOutcome], heartbeat: DaemonHeartbeat?,
               expiredOutcomes: [String], consumedCommands: [String]) throws -> Batch {
        var batch = Batch()
        func write(_ contents: Data, _ absolute: String) {
            batch.writes.append(.init(path: relative(absolute), contents: String(decoding: contents, as: UTF8.self)))
        }
        func write<T: Encodable>(_ value: T, _ absolute: String) throws { write(try JSONFormat.encode(value), absolute) }
        for key in changes.requests.sorted() {
            if let request = state.requests[key] { write(request.fileContents(), paths.request(key)) } else { batch.removals.append(relative(paths.request(key))) }
        }
        for key in changes.transfers.union(changes.transferProgress).sorted() {
            if let transfer = state.transfers[key] {
                try write(transfer, paths.transfer(key))
            } else {
                batch.removals.append(relative(paths.transfer(key)))
                batch.removals.append(relative(paths.transferProgress(key)))
                batch.leftovers = (batch.leftovers ?? []) + [relative(paths.uploadResponseBody(key))]
            }
        }
        // After the transfers: a process launched for a session may read its transfers as soon as
        // its task appears (a question before a delayed begin must be there by then).
        for key in changes.tasks.sorted() {
            if let task = state.tasks[key] { try write(task, paths.task(key)) } else { batch.removals.append(relative(paths.task(key))) }
        }
        for key in changes.pushes.sorted() {
            if let push = state.pushes[key] { try write(push, paths.push(key)) } else { batch.removals.append(relative(paths.push(key))) }
        }
        for id in changes.usage.sorted() {
            if let history = state.usage[id] { try write(history, paths.usage(of: id)) } else { batch.removals.append(relative(paths.usage(of: id))) }
        }
        for id in changes.apps.sorted() {
            if let app = state.apps[id] { try write(app, paths.app(id)) } else { batch.removals.append(relative(paths.app(id))) }
        }
        if changes.conditions { try write(state.conditions, paths.conditions) }
        if changes.processes {
            let endings = state.accounting.endings.values.sorted { $0.launchID < $1.launchID }
            try write(ProcessLedger(processes: state.processes.values.sorted { $0.pid < $1.pid }, endings: endings.isEmpty ? nil : endings),
                      paths.processes)
        }
        for outcome in outcomes {
            let message = outcome.fileContents()
            write(message, paths.outcome(outcome.command))
            batch.outcomeMessages.append((outcome.command, message))
        }
        for id in expiredOutcomes { batch.removals.append(relative(paths.outcome(id))) }
        if let heartbeat { try write(heartbeat, paths.heartbeat) }
        var lines: [UInt8] = []
        for event in changes.events { lines.append(contentsOf: try event.jsonLine()) }
        batch.events = String(decoding: lines, as: UTF8.self)
        batch.consumedCommands = consumedCommands.map(relative)
        return batch
    }

    /// Makes `batch` durable (appended to the journal, synced), then writes it out. `whenVisible`
    /// runs once the batch is durable and its files are in place; what waits for the commit (a
    /// client of the command socket) need not wait for the checkpoint's file system sync, since a
    /// crash before it replays the journal. A journal past its size limits is checkpointed after
    /// `whenVisible`.
    func commit(_ batch: Batch, whenVisible: (() -> Void)? = nil) throws {
        guard !batch.isEmpty else {
            whenVisible?()
            return
        }
        var batch = batch
        // One open of the event log serves a commit with events: it shows the log can be appended
        // to and is not full, measures it, and appends (it was three opens and seven stats).
        var openLog = batch.events.isEmpty ? nil : try? EventLog(paths: paths).openForAppending()
        defer { if let openLog { close(openLog.descriptor) } }
        if let log = openLog, log.size >= settings.eventLogMaximumBytes {
            close(log.descriptor)
            openLog = nil
        }
        if !batch.events.isEmpty && openLog == nil {
            // Each journaled batch names its offset in the current log: the log is replaced
            // (rotated, or set aside) only when no batch in the journal refers to it.
            let replacing = eventLogMustBeReplaced
            if replacing && journal.batchCount > 0 { try checkpoint() }
            // A log replaced by something that cannot be appended to would stop this commit and
            // every later one: set it aside, start a new log, and say why in its first line.
            if let setAside = SetAside(paths: paths).eventLogIfUnusable(now: Date()) {
                batch.events = String(decoding: try setAside.jsonLine(), as: UTF8.self) + batch.events
            }
            try EventLog(paths: paths).rotateIfNeeded(maximumBytes: settings.eventLogMaximumBytes, keep: settings.eventLogKeptFiles)
            // The rename is on disk before a batch names an offset in the new log: else a power
            // loss could bring back the old log, and replaying the batch would cut it to that offset.
            if replacing { try StateFiles.syncDirectory(StateFiles.directoryName(of: paths.events)) }
        }
        batch.eventLogOffset = openLog?.size ?? StateFiles.size(of: paths.events) ?? 0
        try journal.append(batch.journalLine())
        try apply(batch, eventLog: openLog?.descriptor)
        whenVisible?()
        if journalIsFull { try checkpoint() }
    }

    /// What start-up found in the journal.
    struct Recovery {
        /// Whole batches replayed.
        var replayed = 0
        /// A record cut short by a crash (never durable, so dropped), with what followed it:
        /// the bytes to keep aside.
        var dropped: Data?
    }

    /// Replays, oldest first, every whole batch a crash left in the journal, then checkpoints.
    /// Replaying is idempotent: a crash during it replays the same batches again.
    func replayJournal() throws -> Recovery {
        let contents = try journal.contents()
        if contents.isEmpty {
            // Nothing to replay; a journal that is not yet zeros to its size is made so, and one
            // that is has its zeros flushed (a killed scheduler may not have synced them).
            if journal.isClear { try journal.sync() } else { try journal.clear() }
            return Recovery()
        }
        for data in contents.batches { try apply(try JSONFormat.decode(Batch.self, from: data), replaying: true) }
        try journal.syncFileSystem()
        try journal.clear()
        return Recovery(replayed: contents.batches.count, dropped: contents.torn)
    }

    /// Writes out a batch's files, removals, events and consumed commands, without syncing.
    /// `replaying`: the batch comes from the journal at start-up, and the files may hold what was
    /// written after it (``expiryAlarmWroteLater(over:at:)``).
    /// `eventLog`: the log opened for this commit, whose size is the batch's offset (nothing to cut).
    private func apply(_ batch: Batch, replaying: Bool = false, eventLog: Int32? = nil) throws {
        var ensured: Set<String> = []
        func write(_ write: Batch.Write) throws {
            let path = try absolute(write.path)
            if replaying && Self.expiryAlarmWroteLater(over: write.contents, at: path) { return }
            let directory = StateFiles.directoryName(of: path)
            if ensured.insert(directory).inserted { try StateFiles.ensureDirectory(directory) }
            try StateFiles.write(Data(write.contents.utf8), to: path, durable: false)
        }
        // Outcomes last: a client that reads its command's outcome then finds every file and
        // event of the batch as the command left them (a cancelled request already gone).
        let outcomes = "\(relative(paths.outcomes))/"
        for entry in batch.writes where !entry.path.hasPrefix(outcomes) { try write(entry) }
        for removal in batch.removals { try StateFiles.remove(try absolute(removal)) }
        for leftover in batch.leftovers ?? [] { try? StateFiles.remove(try absolute(leftover)) }
        if !batch.events.isEmpty {
            let log = EventLog(paths: paths)
            if let eventLog {
                try log.append(Data(batch.events.utf8), to: eventLog)
            } else {
                try log.truncate(to: batch.eventLogOffset)
                try log.append(Data(batch.events.utf8))
            }
        }
        for command in batch.consumedCommands { try StateFiles.remove(try absolute(command)) }
        for entry in batch.writes where entry.path.hasPrefix(outcomes) { try write(entry) }
    }

    /// Whether the file at `path` holds a task the expiry alarm marked `expiring` (outside the
    /// journal, after the batch that last wrote it) where `contents` would bring the same launch
    /// back to `running`. Such a write is skipped on replay: the next scheduler would otherwise
    /// expire the task again and send its process a second expiration signal. A task never goes
    /// from `expiring` back to `running`, so nothing the journal says is lost; the alarm's file
    /// says its expiry is not recorded yet (``LaunchedTask/unrecordedExpiry``), and start-up
    /// records it.
    private static func expiryAlarmWroteLater(over contents: String, at path: String) -> Bool {
        guard contents.contains("\"running\""),
              let replayed = try? JSONFormat.decode(LaunchedTask.self, from: Data(contents.utf8)), replayed.state == .running,
              let data = try? StateFiles.read(path), let current = try? JSONFormat.decode(LaunchedTask.self, from: data)
        else { return false }
        return current.state == .expiring && current.key == replayed.key && current.launchID == replayed.launchID
            && current.pid == replayed.pid
    }

    private func relative(_ path: String) -> String {
        path.hasPrefix(paths.root + "/") ? String(path.dropFirst(paths.root.count + 1)) : path
    }

    private func absolute(_ path: String) throws -> String {
        // A journal is only ever written by this program, but a path that climbs out of the state
        // directory is refused all the same.
        guard !path.utf8.starts(with: "/".utf8), !PathText.climbs(path) else {
            throw StateError.malformed("journal names a path outside the state directory: \(path)")
        }
        return "\(paths.root)/\(path)"
    }
}
