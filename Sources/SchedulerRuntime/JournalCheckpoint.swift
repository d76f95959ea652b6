import CLinuxSupport
import FoundationEssentials
import TaskState

/// When the journal's batches are checkpointed: the state directory's file system is synced
/// (`syncfs`), so every file the batches wrote is durable on its own, and the journal is emptied.
///
/// A commit pays one `fdatasync` (the journal's); the `syncfs` waits for every dirty page of the
/// file system, so it is deferred and shared by many commits: it runs when the loop has had no
/// commit for ``quietSeconds`` (a one-shot timer, armed with the loop's own timer), when the
/// journal reaches ``maximumBytes`` or ``maximumBatches``, before the event log is rotated or set
/// aside, before a sleep is let go (``SleepInhibitor``), and when the scheduler stops cleanly.
extension GroupCommit {
    /// The quiet period after the last commit: long enough that clients sending commands one
    /// after another (a socket round trip is about a millisecond, a `bgctl` in a shell loop a few)
    /// never wait behind a sync, short enough that a scheduler is idle again at once.
    static let quietSeconds = 0.05
    /// A journal this large is checkpointed at once: it bounds the replay at start-up and the
    /// dirty data one `syncfs` has to write.
    static let maximumBytes = 1 << 20
    /// As many batches as this are checkpointed at once, however small.
    static let maximumBatches = 512

    /// The journal has reached a size limit.
    var journalIsFull: Bool {
        journal.size >= Self.maximumBytes || journal.batchCount >= Self.maximumBatches
    }

    /// The next commit with events rotates the event log or sets it aside.
    var eventLogMustBeReplaced: Bool {
        let log = EventLog(paths: paths)
        if log.problem() != nil { return true }
        return (StateFiles.size(of: paths.events) ?? 0) >= settings.eventLogMaximumBytes
    }

    /// Syncs the file system and empties the journal, if it holds anything.
    func checkpoint() throws {
        guard journal.size > 0 else { return }
        try journal.syncFileSystem()
        try journal.clear()
    }

    /// Checkpoints when the quiet period after the last commit has passed.
    func checkpointIfQuiet() throws {
        // A millisecond early counts: the timer runs on the wall clock, the period on the monotonic one.
        guard let last = journal.lastAppendAt, bg_monotonic_seconds() - last >= Self.quietSeconds - 0.001 else { return }
        try checkpoint()
    }

    /// When the quiet period after the last commit ends, or `nil` when the journal is empty: the
    /// loop's timer is armed for it (or for an earlier deadline of its own).
    func quietCheckpointDate(now: Date) -> Date? {
        guard let last = journal.lastAppendAt else { return nil }
        let remaining = max(0, last + Self.quietSeconds - bg_monotonic_seconds())
        return now.addingTimeInterval(remaining)
    }
}
