import TaskState
import TransferCore

/// How far one transfer has got.
public struct TransferProgress: Hashable, Sendable {
    /// Bytes of the entity now in the partial file (downloads) or sent (uploads).
    public var bytesTransferred: Int64
    /// The whole size when known (`Content-Length`, `Content-Range`, or the source file's size).
    public var bytesExpected: Int64?
    /// Bytes per second over the last few seconds; `nil` until there are two samples.
    public var bytesPerSecond: Double?
    /// The validator of the representation being downloaded (shown in the record; resuming uses
    /// the durable copy beside the partial data); empty for uploads.
    public var validator: ResumeValidator
    /// Body bytes received or sent by this attempt so far, across restarts and redirects: an
    /// attempt that moved bytes made progress, whatever it ended with.
    public var bytesMovedThisAttempt: Int64

    public init(bytesTransferred: Int64, bytesExpected: Int64? = nil, bytesPerSecond: Double? = nil,
                validator: ResumeValidator = ResumeValidator(), bytesMovedThisAttempt: Int64 = 0) {
        self.bytesTransferred = bytesTransferred
        self.bytesExpected = bytesExpected
        self.bytesPerSecond = bytesPerSecond
        self.validator = validator
        self.bytesMovedThisAttempt = bytesMovedThisAttempt
    }
}

/// Something that happened to one transfer's attempt.
///
/// Every ``TransferEngine/start(_:events:)`` produces zero or more `progress` events and then
/// exactly one final event (`completed`, `failed`, `paused` or `cancelled`), all in order.
public struct TransferEvent: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// Bytes moved, or the response head arrived.
        case progress
        /// The held bytes were dropped and the download starts again from byte 0, for `reason`
        /// (they could not be proven to belong to the representation the server sends now).
        case restarted(reason: String)
        /// The attempt's first request is going out: a `Range` request for the bytes from
        /// `rangeStart` on, or (`nil`) a request for the whole representation (always, for an
        /// upload). Sent once per attempt, before the request, so the scheduler's `started` event
        /// says what was asked for rather than what the record held.
        case requested(rangeStart: Int64?)
        /// Downloads: the file is in place and durable. Uploads: the server accepted the body.
        case completed(statusCode: Int)
        /// The attempt ended without success; the partial data is kept when the failure is transient.
        case failed(TransferFailure)
        /// Stopped by ``TransferEngine/pause(_:)``; partial data and validator kept.
        case paused
        /// Stopped by ``TransferEngine/cancel(_:)``; partial data removed.
        case cancelled
    }

    public var key: TaskKey
    public var kind: Kind
    /// The state at the time of the event (for final events: at the end of the attempt).
    public var progress: TransferProgress
    /// With `completed`: the response that completed it; `nil` for every other kind.
    public var response: FinalResponse?

    public init(key: TaskKey, kind: Kind, progress: TransferProgress, response: FinalResponse? = nil) {
        self.key = key
        self.kind = kind
        self.progress = progress
        self.response = response
    }

    /// Whether this event ends the attempt.
    public var isFinal: Bool {
        switch kind {
        case .progress, .restarted, .requested: return false
        case .completed, .failed, .paused, .cancelled: return true
        }
    }
}
