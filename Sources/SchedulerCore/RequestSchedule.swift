import Foundation
import TaskState

/// The pending requests grouped by the machine conditions they need, each group in the order of
/// the date it may begin (undated requests first).
///
/// A machine condition holds a whole group or none of it, so a turn can pass over every group the
/// conditions hold without looking at its requests, and in the others look only at what is due by
/// now and at the head of the dates to come. This is what keeps a turn's cost flat as requests pile
/// up (issue #20): at 100 000 pending requests a turn looks at the few that matter.
struct RequestSchedule: Sendable {
    /// Requests that need the same machine conditions.
    struct ConditionGroup: Hashable, Sendable {
        var kind: TaskKind
        var requiresExternalPower: Bool
        var requiresNetworkConnectivity: Bool
        var refusesExpensiveNetwork: Bool

        init(_ request: PendingRequest) {
            kind = request.kind
            requiresExternalPower = request.requiresExternalPower
            requiresNetworkConnectivity = request.requiresNetworkConnectivity
            refusesExpensiveNetwork = request.allowsExpensiveNetworkAccess == false
        }

        /// The blockers every request of the group has under `effective`, in the order
        /// ``SchedulerState/blockers(for:at:)`` lists them; empty when the conditions let the group run.
        func conditionBlockers(under effective: Conditions) -> [Blocker] {
            var result: [Blocker] = []
            if requiresExternalPower && !effective.externalPower { result.append(.externalPower) }
            if requiresNetworkConnectivity && !effective.network { result.append(.network) }
            if kind == .processing && !effective.idle { result.append(.idle) }
            if effective.lowPower { result.append(.lowPower) }
            if effective.expensive && refusesExpensiveNetwork { result.append(.expensiveNetwork) }
            return result
        }
    }

    private(set) var groups: [ConditionGroup: DateOrderedKeys] = [:]

    mutating func insert(_ request: PendingRequest) {
        groups[ConditionGroup(request), default: DateOrderedKeys()].insert(Self.entry(request))
    }

    mutating func remove(_ request: PendingRequest) {
        let group = ConditionGroup(request)
        groups[group]?.remove(Self.entry(request))
        if groups[group]?.isEmpty == true { groups[group] = nil }
    }

    private static func entry(_ request: PendingRequest) -> DateOrderedKeys.Entry {
        DateOrderedKeys.Entry(date: request.earliestBeginDate ?? .distantPast, key: request.key)
    }
}
