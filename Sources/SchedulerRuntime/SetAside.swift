import FoundationEssentials
import TaskState

/// The two files the scheduler appends to or rewrites at every commit, the event log and the
/// journal, set aside when they cannot be used, so that the scheduler starts a new one and runs
/// on instead of stopping at its first commit (and, restarted, stopping again, forever).
///
/// The file goes to `quarantine/` like any unusable state file, with its `.reason`; the
/// `quarantined` event that says so is the first line of the new log.
struct SetAside {
    let paths: StatePaths

    /// Sets `events.jsonl` aside when it cannot be appended to (a symbolic link, a directory, a
    /// FIFO, a file this user may not write). Returns the event recording it, or `nil` when the log
    /// is fine.
    func eventLogIfUnusable(now: Date) -> Event? {
        guard let problem = EventLog(paths: paths).problem() else { return nil }
        return isolate(paths.events, problem: problem, what: "the event log", now: now)
    }

    /// Sets `journal.json` aside when it is not a regular file this user can read and write.
    func journalIfUnusable(now: Date) -> Event? {
        guard StateFiles.exists(paths.journal) else { return nil }
        do {
            close(try RegularFile.open(paths.journal, O_RDWR))
            return nil
        } catch {
            return isolate(paths.journal, problem: error.description, what: "the journal", now: now)
        }
    }

    private func isolate(_ path: String, problem: String, what: String, now: Date) -> Event {
        let quarantine = Quarantine(paths: paths)
        let reason = quarantine.line(for: path, reason: problem)
        do {
            let target = try quarantine.isolate(path, reason: problem, now: now)
            let kept = target.hasPrefix(paths.root + "/") ? String(target.dropFirst(paths.root.count + 1)) : target
            return Event(time: now, type: .quarantined, reason: reason,
                         message: "\(reason); set \(what) aside as \(kept) and started a new one")
        } catch {
            return Event(time: now, type: .quarantined, reason: reason,
                         message: "\(reason); could not set \(what) aside: \(error)")
        }
    }
}

#if canImport(Glibc)
import Glibc
#endif
