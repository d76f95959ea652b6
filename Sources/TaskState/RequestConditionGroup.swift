import FoundationEssentials

/// What a pending request needs of the machine's conditions: requests with the same needs are held
/// or let through by the conditions alike. The scheduler's policy (`SchedulerState.blockers(for:at:)`)
/// reads the conditions by the same rules as ``conditionBlockers(under:)`` and by no others (the
/// indexed-turn tests check every combination), so after a change of conditions only the requests
/// of a group whose condition blockers changed can wait differently, and a request's blockers are
/// its own (``Blocker/condition`` nil) joined with its group's (``blockers(joining:under:)``).
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

    /// The blockers every request of the group has under `effective`, in the order the policy
    /// lists them; empty when the conditions let the group run.
    public func conditionBlockers(under effective: Conditions) -> [Blocker] {
        var result: [Blocker] = []
        if requiresExternalPower && !effective.externalPower { result.append(.externalPower) }
        if requiresNetworkConnectivity && !effective.network { result.append(.network) }
        if kind == .processing && !effective.idle { result.append(.idle) }
        if effective.lowPower { result.append(.lowPower) }
        if effective.expensive && refusesExpensiveNetwork { result.append(.expensiveNetwork) }
        return result
    }

    /// A request's blockers under `effective`, from those that are its own (`own`, no condition
    /// among them, in the policy's order): the group's condition blockers placed where the policy
    /// lists them. What a row that keeps only its own blockers shows, so that a change of
    /// conditions edits no row.
    public func blockers(joining own: [Blocker], under effective: Conditions) -> [Blocker] {
        let conditions = conditionBlockers(under: effective)
        guard !conditions.isEmpty else { return own }
        var result: [Blocker] = []
        result.reserveCapacity(own.count + conditions.count)
        var next = conditions.startIndex
        for blocker in own {
            while next < conditions.endIndex, Self.place(conditions[next]) < Self.place(blocker) {
                result.append(conditions[next])
                next += 1
            }
            result.append(blocker)
        }
        result.append(contentsOf: conditions[next...])
        return result
    }

    /// Where the policy lists a blocker among the others: the date first, then power, network
    /// and idle, the app's throttle and switch, low power and a metered network, then the rest
    /// in their own order.
    private static func place(_ blocker: Blocker) -> Int {
        switch blocker {
        case .earliestBeginDate: return 0
        case .externalPower: return 1
        case .network: return 2
        case .idle: return 3
        case .throttled: return 4
        case .appDisabled: return 5
        case .lowPower: return 6
        case .expensiveNetwork: return 7
        default: return 8
        }
    }
}
