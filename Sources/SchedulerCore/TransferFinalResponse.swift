import FoundationEssentials
import TaskState

/// What the response that completed a transfer said, kept on its record so that an app awaiting
/// the transfer (`BGURLSession.download(for:)`, `upload(for:fromFile:)`) gets the real status and
/// header fields, and an upload the start of its answer.
extension SchedulerState {
    /// The attempt of `key` ended with this response; called just before its end is applied
    /// (``transferEnded(_:_:bytesTransferred:bytesExpected:now:)``). Ignored for a transfer that
    /// is no longer running (cancelled meanwhile), whose end is not taken either.
    public mutating func recordFinalResponse(_ key: TaskKey, statusCode: Int, headers: [TransferHeader], bodyFile: String?,
                                          now: Date) {
        guard var record = transfers[key], record.state == .running || record.state == .paused else { return }
        record.responseStatusCode = statusCode
        // The engine keeps them by these rules already; the record is what others read.
        let kept = ResponseHeaderRules.kept(headers)
        record.responseHeaders = kept.isEmpty ? nil : kept
        record.responseBodyFile = bodyFile.flatMap { Self.isPlainFileName($0) ? $0 : nil }
        record.updatedAt = now
        setTransfer(record)
    }
}
