import FoundationEssentials

/// A submitted task request waiting to be launched: `requests/<app>/<identifier>.json`.
public struct PendingRequest: Codable, Hashable, Sendable {
    /// The app that submitted it.
    public var app: Identifier
    /// The task identifier (one of the app's permitted identifiers).
    public var identifier: Identifier
    /// `appRefresh` or `processing`.
    public var kind: TaskKind
    /// Not before this time; `nil` means as soon as conditions allow.
    public var earliestBeginDate: Date?
    /// Processing only: wait for a network connection.
    public var requiresNetworkConnectivity: Bool
    /// Processing only: wait for external power.
    public var requiresExternalPower: Bool
    /// When the scheduler accepted it (a replacement gets a new date).
    public var submittedAt: Date
    /// The command that submitted it.
    public var commandID: String?
    /// `false`: waits while the network is metered (blocker `expensiveNetwork`); absent: allowed.
    public var allowsExpensiveNetworkAccess: Bool?

    public init(app: Identifier, identifier: Identifier, kind: TaskKind, earliestBeginDate: Date? = nil,
                requiresNetworkConnectivity: Bool = false, requiresExternalPower: Bool = false,
                submittedAt: Date, commandID: String? = nil, allowsExpensiveNetworkAccess: Bool? = nil) {
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.earliestBeginDate = earliestBeginDate
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
        self.requiresExternalPower = requiresExternalPower
        self.submittedAt = submittedAt
        self.commandID = commandID
    }

    /// The key that makes a request unique: one pending request per app and identifier.
    public var key: TaskKey { TaskKey(app: app, identifier: identifier) }

    /// The earliest time it may start: its `earliestBeginDate`, or its submission.
    public var readyDate: Date { max(earliestBeginDate ?? submittedAt, submittedAt) }
}

/// An app and one of its task identifiers.
public struct TaskKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var app: Identifier
    public var identifier: Identifier

    public init(app: Identifier, identifier: Identifier) {
        self.app = app
        self.identifier = identifier
    }

    public var description: String { "\(app)/\(identifier)" }

    public static func < (lhs: TaskKey, rhs: TaskKey) -> Bool {
        (lhs.app, lhs.identifier) < (rhs.app, rhs.identifier)
    }
}

extension PendingRequest {
    /// The request's file (`requests/<app>/<identifier>.json`): the bytes `JSONFormat.encode`
    /// makes of it, written directly (``PrettyJSONObject``).
    public func fileContents() -> Data {
        var object = PrettyJSONObject(capacity: 384 + (commandID?.utf8.count ?? 0))
        object.bool("allowsExpensiveNetworkAccess", allowsExpensiveNetworkAccess)
        object.string("app", app.rawValue)
        object.string("commandID", commandID)
        object.date("earliestBeginDate", earliestBeginDate)
        object.string("identifier", identifier.rawValue)
        object.string("kind", kind.rawValue)
        object.bool("requiresExternalPower", requiresExternalPower)
        object.bool("requiresNetworkConnectivity", requiresNetworkConnectivity)
        object.date("submittedAt", submittedAt)
        return object.finished()
    }
}
