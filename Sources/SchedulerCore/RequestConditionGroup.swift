import Foundation
import TaskState

/// What a pending request needs of the machine's conditions: requests with the same needs are held
/// or let through by the conditions alike. ``SchedulerState/blockers(for:at:)`` reads the
/// conditions by the same rules as ``conditionBlockers(under:)`` and by no others (the indexed-turn
/// tests check every combination), so after a change of conditions only the requests of a group
/// whose condition blockers changed can wait differently.
public struct RequestConditionGroup: Hashable, Sendable {
    public var kind: TaskKind
    public var requiresExternalPower: Bool
    public var requiresNetworkConnectivity: Bool
    public var refusesExpensiveNetwork: Bool

    public init(_ request: PendingRequest) {
        kind = request.kind
        requiresExternalPower = request.requiresExternalPower
        requiresNetworkConnectivity = request.requiresNetworkConnectivity
        refusesExpensiveNetwork = request.allowsExpensiveNetworkAccess == false
    }

    /// The blockers every request of the group has under `effective`, in the order
    /// ``SchedulerState/blockers(for:at:)`` lists them; empty when the conditions let the group run.
    public func conditionBlockers(under effective: Conditions) -> [Blocker] {
        var result: [Blocker] = []
        if requiresExternalPower && !effective.externalPower { result.append(.externalPower) }
        if requiresNetworkConnectivity && !effective.network { result.append(.network) }
        if kind == .processing && !effective.idle { result.append(.idle) }
        if effective.lowPower { result.append(.lowPower) }
        if effective.expensive && refusesExpensiveNetwork { result.append(.expensiveNetwork) }
        return result
    }
}
