import FoundationEssentials

/// A background transfer carried by the scheduler: `transfers/<app>/<identifier>.json`.
///
/// The schema is fixed now so that the dashboard and `bgctl list` can show transfers; the engine
/// that moves the bytes writes these records.
public struct TransferRecord: Codable, Hashable, Sendable {
    public enum Direction: String, Codable, Sendable { case download, upload }
    public enum State: String, Codable, Sendable {
        case waiting, running, paused, completed, failed, cancelled
    }

    public var app: Identifier
    public var identifier: Identifier
    /// The background session the transfer belongs to.
    public var session: String?
    public var direction: Direction
    public var url: String
    public var state: State
    public var bytesTransferred: Int64
    /// From `Content-Length`, else the app's `countOfBytesClientExpectsToReceive/Send`; `nil` if unknown.
    public var bytesExpected: Int64?
    /// Bytes per second over the last few seconds.
    public var bytesPerSecond: Double?
    public var earliestBeginDate: Date?
    public var isDiscretionary: Bool
    public var createdAt: Date
    public var updatedAt: Date
    public var retries: Int
    public var lastError: String?

    // Fields below were added with the transfer engine; all are optional so that older files read.

    /// Downloads: where the finished file goes, inside the app's own folder (relative to it, or absolute).
    public var destination: String?
    /// Whether it may run while the network is metered; `nil`: the default
    /// (``mayUseExpensiveNetwork``).
    public var allowsExpensiveNetworkAccess: Bool?
    /// Uploads: the file whose bytes are sent.
    public var sourceFile: String?
    /// The app's hint `countOfBytesClientExpectsToReceive` (downloads).
    public var countOfBytesClientExpectsToReceive: Int64?
    /// The app's hint `countOfBytesClientExpectsToSend` (uploads).
    public var countOfBytesClientExpectsToSend: Int64?
    /// Seconds without progress before an attempt fails; `nil` means 60.
    public var timeoutIntervalForRequest: Double?
    /// Seconds from `createdAt` before the transfer gives up for good; `nil` means 7 days.
    public var timeoutIntervalForResource: Double?
    /// When a transfer that failed transiently may try again (set with `state` `waiting`).
    public var retryAt: Date?
    /// The `ETag` of the entity being downloaded, so a later attempt can resume with `If-Range`.
    public var etag: String?
    /// The `Last-Modified` of the entity being downloaded, used for `If-Range` when there is no strong ETag.
    public var lastModified: String?
    /// When it reached `completed`, `failed` or `cancelled`.
    public var finishedAt: Date?
    /// Launch the app with reason `urlSession` when the transfer ends and no process of it runs.
    public var sessionSendsLaunchEvents: Bool?
    /// When the scheduler launched the app to hear of this transfer's end (once per transfer).
    public var eventsLaunchedAt: Date?
    /// Transient failures in a row whose attempts moved no bytes: the retry backoff's step.
    /// `nil` in older files, where `retries` stands in for it.
    public var failuresWithoutProgress: Int?
    /// Downloads: the SHA-256 the finished file must have, 64 lowercase hexadecimal digits. The
    /// engine hashes the whole file before moving it into place; a mismatch fails the transfer for
    /// good (``lastError`` names both digests) and leaves no file. `nil`: not checked.
    public var sha256: String?
    /// The relaunch rate limiter: a transfer the app created while the scheduler had launched it
    /// in the background does not begin before this time (`relaunchDelay`). `nil`: no delay.
    public var relaunchDelayUntil: Date?
    /// The HTTP method; `nil`: `GET` for a download, `PUT` for an upload.
    public var method: String?
    /// Header fields sent on every attempt and resume, secrets included: this file is mode 0600
    /// (see `docs/state-format.md`, "Where secrets live"). Show them only through ``redactedHeaders``.
    public var headers: [TransferHeader]?
    /// Names of headers that are secrets besides ``TransferHeaderRules/alwaysSecret``.
    public var secretHeaderNames: [String]?
    /// The app's session delegate implements `willBeginDelayedRequest`: before this transfer's
    /// first attempt, once its `earliestBeginDate` has passed, the scheduler asks the app.
    public var asksBeforeDelayedBegin: Bool?
    /// When the scheduler asked the app about the delayed begin; no byte goes out until it
    /// answers or ``delayedRequestAnswerBy`` passes (the `awaitingAnswer` blocker).
    public var delayedRequestAskedAt: Date?
    /// When an unanswered question is given up on, and the transfer begins as made.
    public var delayedRequestAnswerBy: Date?
    /// When the scheduler launched the app (reason `urlSession`) to ask it; once per question.
    public var delayedRequestLaunchedAt: Date?
    /// How the question ended; `nil` while none was asked or it waits for an answer.
    public var delayedRequestOutcome: DelayedRequestOutcome?
    /// The status code of the response that completed the transfer (a download's last response,
    /// an upload's answer); `nil` before it completed, and in older files.
    public var responseStatusCode: Int?
    /// That response's header fields, in order, without `Set-Cookie` (see ``ResponseHeaderRules``).
    public var responseHeaders: [TransferHeader]?
    /// Uploads: the file in the app's downloads folder (relative to it) holding the first
    /// ``ResponseHeaderRules/bodyLimit`` bytes of the response's body; `nil` when it had none.
    public var responseBodyFile: String?

    public init(app: Identifier, identifier: Identifier, session: String? = nil, direction: Direction,
                url: String, state: State, bytesTransferred: Int64 = 0, bytesExpected: Int64? = nil,
                bytesPerSecond: Double? = nil, earliestBeginDate: Date? = nil, isDiscretionary: Bool = false,
                createdAt: Date, updatedAt: Date, retries: Int = 0, lastError: String? = nil,
                destination: String? = nil, sourceFile: String? = nil,
                countOfBytesClientExpectsToReceive: Int64? = nil, countOfBytesClientExpectsToSend: Int64? = nil,
                timeoutIntervalForRequest: Double? = nil, timeoutIntervalForResource: Double? = nil,
                retryAt: Date? = nil, etag: String? = nil, lastModified: String? = nil, finishedAt: Date? = nil,
                sessionSendsLaunchEvents: Bool? = nil, sha256: String? = nil, method: String? = nil,
                headers: [TransferHeader]? = nil, secretHeaderNames: [String]? = nil) {
        self.app = app
        self.identifier = identifier
        self.session = session
        self.direction = direction
        self.url = url
        self.state = state
        self.bytesTransferred = bytesTransferred
        self.bytesExpected = bytesExpected
        self.bytesPerSecond = bytesPerSecond
        self.earliestBeginDate = earliestBeginDate
        self.isDiscretionary = isDiscretionary
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.retries = retries
        self.lastError = lastError
        self.destination = destination
        self.sourceFile = sourceFile
        self.countOfBytesClientExpectsToReceive = countOfBytesClientExpectsToReceive
        self.countOfBytesClientExpectsToSend = countOfBytesClientExpectsToSend
        self.timeoutIntervalForRequest = timeoutIntervalForRequest
        self.timeoutIntervalForResource = timeoutIntervalForResource
        self.retryAt = retryAt
        self.etag = etag
        self.lastModified = lastModified
        self.finishedAt = finishedAt
        self.sessionSendsLaunchEvents = sessionSendsLaunchEvents
        self.sha256 = sha256
        self.method = method
        self.headers = headers
        self.secretHeaderNames = secretHeaderNames
    }

    /// The headers as they may be shown: secret values replaced by `redacted`.
    public var redactedHeaders: [TransferHeader]? {
        headers.map { TransferHeaderRules.redacted($0, secretNames: secretHeaderNames) }
    }

    /// The record as it may leave the state directory (`bgctl watch --json`, a remote `bgtop`):
    /// secret header values replaced by `redacted`, in the request and in the final response (a
    /// server may answer with a refreshed token under a secret name), and the URL's credentials
    /// hidden (``URLText``).
    public var redacted: TransferRecord {
        var copy = self
        copy.url = URLText.hidingCredentials(url)
        copy.headers = redactedHeaders
        copy.responseHeaders = responseHeaders.map { TransferHeaderRules.redacted($0, secretNames: secretHeaderNames) }
        return copy
    }

    public var key: TaskKey { TaskKey(app: app, identifier: identifier) }

    /// The default of ``timeoutIntervalForRequest``: 60 seconds without progress.
    public static let defaultTimeoutIntervalForRequest: Double = 60
    /// The default of ``timeoutIntervalForResource``: 7 days.
    public static let defaultTimeoutIntervalForResource: Double = 7 * 86_400

    /// The moment the transfer gives up for good: `createdAt` plus the resource timeout.
    public var resourceDeadline: Date {
        createdAt.addingTimeInterval(timeoutIntervalForResource ?? Self.defaultTimeoutIntervalForResource)
    }
}

extension TransferRecord.State {
    /// Not yet completed, failed or cancelled.
    public var isActive: Bool { self == .waiting || self == .running || self == .paused }
}

extension TransferRecord {
    /// The record or, when its progress file is readable and newer, the progress file's copy.
    ///
    /// Progress moves several times a second, and making each step durable would sync the
    /// download's own data with it. So the scheduler writes progress to `<id>.progress` without a
    /// sync and the durable `<id>.json` only in its group commit: a crash can lose a progress
    /// figure (the partial file's size is the truth on resume), never the transfer itself.
    public static func newest(_ record: TransferRecord, progressFile: String) -> TransferRecord {
        guard let data = try? StateFiles.read(progressFile),
              let progress = try? JSONFormat.decode(TransferRecord.self, from: data),
              progress.key == record.key, progress.updatedAt > record.updatedAt else { return record }
        return progress
    }
}

extension TransferRecord {
    /// Whether it may run on a metered network: as set, else yes unless discretionary (Apple's
    /// background sessions keep discretionary transfers off expensive networks).
    public var mayUseExpensiveNetwork: Bool { allowsExpensiveNetworkAccess ?? !isDiscretionary }
}
