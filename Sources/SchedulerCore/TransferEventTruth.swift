import FoundationEssentials
import TaskState

/// The `transferStarted` and `transferPaused` events say what the attempt did, not what the
/// record held: a start names the byte its `Range` request asked for, and a pause the bytes the
/// stopped attempt left in the partial file.
extension SchedulerState {
    /// A running transfer's attempt sent its first request: a `Range` request for the bytes from
    /// `rangeStart` on, or (`nil`) one for the whole representation.
    ///
    /// A retried download that asks for everything says `from byte 0`: its held bytes were not
    /// resumed (a `transferRestarted` event before this one says why when it dropped some).
    public mutating func transferRequested(_ key: TaskKey, rangeStart: Int64?, now: Date) {
        guard let record = transfers[key], record.state == .running || record.state == .paused else { return }
        let from: String
        if let rangeStart, rangeStart > 0 {
            from = " from byte \(rangeStart)"
        } else if record.direction == .download && record.retries > 0 {
            from = " from byte 0"
        } else {
            from = ""
        }
        self.record(Event(time: now, type: .transferStarted, app: record.app, identifier: record.identifier,
                          message: "\(record.app): transfer \(record.identifier) started\(from) (attempt \(record.retries + 1))"))
    }

    /// The `transferPaused` event of a transfer with no attempt running: its count is what the last
    /// attempt left on disk.
    mutating func recordPaused(_ record: TransferRecord, command: String?, now: Date) {
        self.record(Event(time: now, type: .transferPaused, app: record.app, identifier: record.identifier, command: command,
                          message: "\(record.app): transfer \(record.identifier) paused at \(record.bytesTransferred) bytes"))
    }

    /// The attempt of a transfer paused while it ran has ended: the pause is recorded with the bytes
    /// the attempt left (a completion that beat the pause is a completion, and a cancel a cancel).
    mutating func recordPausedAttemptEnd(_ record: TransferRecord, _ end: TransferAttemptEnd, bytesTransferred: Int64,
                                         command: String?, now: Date) {
        switch end {
        case .paused, .failed:
            var held = record
            held.bytesTransferred = bytesTransferred
            recordPaused(held, command: command, now: now)
        case .completed, .cancelled:
            break
        }
    }
}
