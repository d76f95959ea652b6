import FoundationEssentials

/// The fields of a submitted `BGTaskRequest`.
public struct SubmitRequest: Hashable, Sendable {
    public var app: Identifier
    public var identifier: Identifier
    public var kind: TaskKind
    public var earliestBeginDate: Date?
    public var requiresNetworkConnectivity: Bool
    public var requiresExternalPower: Bool
    /// `false`: wait while the network is metered (the `expensive` condition); `nil` or `true`:
    /// allowed, as Apple's `allowsExpensiveNetworkAccess` defaults.
    public var allowsExpensiveNetworkAccess: Bool?

    public init(app: Identifier, identifier: Identifier, kind: TaskKind, earliestBeginDate: Date? = nil,
                requiresNetworkConnectivity: Bool = false, requiresExternalPower: Bool = false,
                allowsExpensiveNetworkAccess: Bool? = nil) {
        self.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.earliestBeginDate = earliestBeginDate
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
        self.requiresExternalPower = requiresExternalPower
    }
}
