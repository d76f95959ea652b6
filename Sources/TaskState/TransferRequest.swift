import FoundationEssentials

/// The fields of a background transfer an app hands to the scheduler (`downloadTask(with:)` /
/// `uploadTask(with:fromFile:)` on a background session, or `bgctl transfer download|upload`).
public struct TransferRequest: Hashable, Sendable {
    public var app: Identifier
    public var identifier: Identifier
    /// The background session's identifier; the app is woken with it when the transfer ends.
    public var session: String?
    public var direction: TransferRecord.Direction
    public var url: String
    /// Downloads: the file name the finished download gets in the app's downloads folder.
    public var destination: String?
    /// Uploads: the absolute path of the file to send.
    public var sourceFile: String?
    public var earliestBeginDate: Date?
    public var isDiscretionary: Bool
    /// Launch the app with reason `urlSession` when the transfer ends and it is not running.
    public var sessionSendsLaunchEvents: Bool
    public var countOfBytesClientExpectsToSend: Int64?
    public var countOfBytesClientExpectsToReceive: Int64?
    public var timeoutIntervalForRequest: Double?
    public var timeoutIntervalForResource: Double?
    /// Downloads: the SHA-256 the finished file must have, as 64 hexadecimal digits (either case).
    /// The transfer completes only when it matches, and fails for good when it does not. Kept as
    /// given: the scheduler validates it (``SHA256Hex``) and refuses the command when it is malformed.
    public var sha256: String?
    /// The HTTP method (``TransferHeaderRules/downloadMethods``, ``TransferHeaderRules/uploadMethods``);
    /// `nil`: `GET` for a download, `PUT` for an upload.
    public var method: String?
    /// Header fields sent on every attempt and resume; see ``TransferHeaderRules``.
    public var headers: [TransferHeader]?
    /// Names of headers that are secrets besides `Authorization`, `Proxy-Authorization` and `Cookie`.
    public var secretHeaderNames: [String]?
    /// The app wants to be asked before the transfer begins, once its `earliestBeginDate` has
    /// passed (`willBeginDelayedRequest`); without an `earliestBeginDate` nothing is asked.
    public var asksBeforeDelayedBegin: Bool
    /// Whether it may run while the network is metered; `nil`: yes unless discretionary
    /// (``TransferRecord/mayUseExpensiveNetwork``).
    public var allowsExpensiveNetworkAccess: Bool?

    public init(app: Identifier, identifier: Identifier, session: String? = nil, direction: TransferRecord.Direction,
                url: String, destination: String? = nil, sourceFile: String? = nil, earliestBeginDate: Date? = nil,
                isDiscretionary: Bool = false, sessionSendsLaunchEvents: Bool = false,
                countOfBytesClientExpectsToSend: Int64? = nil, countOfBytesClientExpectsToReceive: Int64? = nil,
                timeoutIntervalForRequest: Double? = nil, timeoutIntervalForResource: Double? = nil,
                sha256: String? = nil, method: String? = nil, headers: [TransferHeader]? = nil,
                secretHeaderNames: [String]? = nil, asksBeforeDelayedBegin: Bool = false,
                allowsExpensiveNetworkAccess: Bool? = nil) {
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.app = app
        self.identifier = identifier
        self.session = session
        self.direction = direction
        self.url = url
        self.destination = destination
        self.sourceFile = sourceFile
        self.earliestBeginDate = earliestBeginDate
        self.isDiscretionary = isDiscretionary
        self.sessionSendsLaunchEvents = sessionSendsLaunchEvents
        self.countOfBytesClientExpectsToSend = countOfBytesClientExpectsToSend
        self.countOfBytesClientExpectsToReceive = countOfBytesClientExpectsToReceive
        self.timeoutIntervalForRequest = timeoutIntervalForRequest
        self.timeoutIntervalForResource = timeoutIntervalForResource
        self.sha256 = sha256
        self.method = method
        self.headers = headers
        self.secretHeaderNames = secretHeaderNames
        self.asksBeforeDelayedBegin = asksBeforeDelayedBegin
    }

    public var key: TaskKey { TaskKey(app: app, identifier: identifier) }
}
