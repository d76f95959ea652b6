import Foundation
import Synchronization
import TaskState

/// One transfer of a background session (`URLSessionDownloadTask` / `URLSessionUploadTask`).
/// Set its hints, then `resume()`: from then on the scheduler carries it, also after this process
/// has gone.
public final class BGURLSessionTask: Sendable, CustomStringConvertible {
    /// The transfer's identifier, unique among the app's transfers (Apple's is a number).
    public let taskIdentifier: String
    public let originalURL: URL
    /// For uploads: the file sent.
    public let sourceFile: URL?
    /// For downloads made with ``BGURLSession/downloadTask(with:expectedSHA256:)``: the SHA-256
    /// the finished file must have. The scheduler hashes the file before it completes the task;
    /// when the digest differs the task fails (``BGURLSessionError/Code/failed``, both digests in
    /// the message) and no file is delivered. `nil`: not checked.
    public let expectedSHA256: String?
    /// For tasks made from a `URLRequest`: its method and header fields, sent on every attempt.
    let requestMethod: String?
    let requestHeaders: [TransferHeader]?
    let direction: TransferRecord.Direction
    /// Made for the request of a transfer an async call awaits: `resume()` promotes that transfer.
    let promotes: Bool
    private weak let session: BGURLSession?
    private let guarded: Mutex<Guarded>

    struct Guarded {
        var earliestBeginDate: Date?
        var countOfBytesClientExpectsToSend: Int64 = -1
        var countOfBytesClientExpectsToReceive: Int64 = -1
        var submitted = false
        var record: TransferRecord?
    }

    init(identifier: String, url: URL, sourceFile: URL?, direction: TransferRecord.Direction, session: BGURLSession,
         record: TransferRecord? = nil, expectedSHA256: String? = nil, requestMethod: String? = nil,
         requestHeaders: [TransferHeader]? = nil, promotes: Bool = false) {
        taskIdentifier = identifier
        self.promotes = promotes
        self.requestMethod = requestMethod
        self.requestHeaders = requestHeaders
        originalURL = url
        self.sourceFile = sourceFile
        self.expectedSHA256 = expectedSHA256
        self.direction = direction
        self.session = session
        guarded = Mutex(Guarded(submitted: record != nil, record: record))
    }

    /// Not before this date; a floor, never a promise. Set before `resume()`.
    public var earliestBeginDate: Date? {
        get { guarded.withLock { $0.earliestBeginDate } }
        set { guarded.withLock { $0.earliestBeginDate = newValue } }
    }

    /// The size the app expects to send, for scheduling; -1 when unknown. Set before `resume()`.
    public var countOfBytesClientExpectsToSend: Int64 {
        get { guarded.withLock { $0.countOfBytesClientExpectsToSend } }
        set { guarded.withLock { $0.countOfBytesClientExpectsToSend = newValue } }
    }

    /// The size the app expects to receive, for scheduling and display when the server sends no
    /// length; -1 when unknown. Set before `resume()`.
    public var countOfBytesClientExpectsToReceive: Int64 {
        get { guarded.withLock { $0.countOfBytesClientExpectsToReceive } }
        set { guarded.withLock { $0.countOfBytesClientExpectsToReceive = newValue } }
    }

    /// Bytes moved so far, as the scheduler last recorded.
    public var countOfBytesTransferred: Int64 { guarded.withLock { $0.record?.bytesTransferred ?? 0 } }

    /// The whole size when known, else -1.
    public var countOfBytesExpectedToTransfer: Int64 { guarded.withLock { $0.record?.bytesExpected ?? -1 } }

    /// The scheduler's state of the transfer (`waiting`, `running`, `paused`, ...); `nil` before `resume()`.
    public var transferState: TransferRecord.State? { guarded.withLock { $0.record?.state } }

    /// Hands the transfer to the scheduler, or resumes it after `suspend()`. A refusal (no
    /// scheduler running, a bad URL) reaches the delegate's `didCompleteWithError`.
    public func resume() {
        let first = guarded.withLock { state -> Bool in
            defer { state.submitted = true }
            return !state.submitted
        }
        guard let session else { return }
        if first {
            session.submit(self)
        } else {
            session.tell(CommandAction.transferResume, self)
        }
    }

    /// Pauses the transfer; the bytes so far are kept.
    public func suspend() {
        session?.tell(CommandAction.transferPause, self)
    }

    /// Cancels the transfer; the delegate hears `didCompleteWithError` with `.cancelled`.
    public func cancel() {
        session?.tell(CommandAction.transferCancel, self)
    }

    func update(_ record: TransferRecord) {
        guarded.withLock { $0.record = record }
    }

    var hints: (earliest: Date?, send: Int64, receive: Int64) {
        guarded.withLock { ($0.earliestBeginDate, $0.countOfBytesClientExpectsToSend, $0.countOfBytesClientExpectsToReceive) }
    }

    public var description: String { "<BGURLSessionTask \(taskIdentifier): \(direction.rawValue) \(originalURL)>" }
}
