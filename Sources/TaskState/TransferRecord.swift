import Foundation

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

    public init(app: Identifier, identifier: Identifier, session: String? = nil, direction: Direction,
                url: String, state: State, bytesTransferred: Int64 = 0, bytesExpected: Int64? = nil,
                bytesPerSecond: Double? = nil, earliestBeginDate: Date? = nil, isDiscretionary: Bool = false,
                createdAt: Date, updatedAt: Date, retries: Int = 0, lastError: String? = nil) {
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
    }

    public var key: TaskKey { TaskKey(app: app, identifier: identifier) }
}
