import Foundation

/// The fields of a submitted `BGTaskRequest`.
public struct SubmitRequest: Hashable, Sendable {
    public var app: Identifier
    public var identifier: Identifier
    public var kind: TaskKind
    public var earliestBeginDate: Date?
    public var requiresNetworkConnectivity: Bool
    public var requiresExternalPower: Bool

    public init(app: Identifier, identifier: Identifier, kind: TaskKind, earliestBeginDate: Date? = nil,
                requiresNetworkConnectivity: Bool = false, requiresExternalPower: Bool = false) {
        self.app = app
        self.identifier = identifier
        self.kind = kind
        self.earliestBeginDate = earliestBeginDate
        self.requiresNetworkConnectivity = requiresNetworkConnectivity
        self.requiresExternalPower = requiresExternalPower
    }
}
