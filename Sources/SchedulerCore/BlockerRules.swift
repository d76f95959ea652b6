import FoundationEssentials
import TaskState

extension SchedulerState {
    /// Every reason `request` is not running at `now`, in a fixed order; empty means it may launch.
    public func blockers(for request: PendingRequest, at now: Date) -> [Blocker] {
        var result: [Blocker] = []
        if let earliest = request.earliestBeginDate, earliest > now { result.append(.earliestBeginDate) }
        let effective = conditions.effective
        if request.requiresExternalPower && !effective.externalPower { result.append(.externalPower) }
        if request.requiresNetworkConnectivity && !effective.network { result.append(.network) }
        if request.kind == .processing && !effective.idle { result.append(.idle) }
        if let until = throttledUntil(request.app), until > now { result.append(.throttled) }
        if !isEnabled(request.app) { result.append(.appDisabled) }
        if effective.lowPower { result.append(.lowPower) }
        if effective.expensive && request.allowsExpensiveNetworkAccess == false { result.append(.expensiveNetwork) }
        // Looked up without copying the values: this runs for every request at every turn.
        if tasks.index(forKey: request.key) != nil { result.append(.alreadyRunning) }
        if catalog.manifests.index(forKey: request.app) == nil { result.append(.noManifest) }
        // Only once the request is ready: before that, its date holds it anyway.
        if !result.contains(.earliestBeginDate), let plan = usagePlan(for: request, at: now) { result.append(plan.blocker) }
        if let blocker = recentUseBlocker(for: request, at: now) { result.append(blocker) }
        return result
    }

    /// When a blocked request could next become runnable by time alone, if only timed blockers hold it.
    func timedReadiness(of request: PendingRequest, blockers: [Blocker], at now: Date) -> Date? {
        guard !blockers.isEmpty, blockers.allSatisfy(\.isTimed) else { return nil }
        var date = Date.distantPast
        if blockers.contains(.earliestBeginDate), let earliest = request.earliestBeginDate { date = max(date, earliest) }
        if blockers.contains(.throttled), let until = throttledUntil(request.app) { date = max(date, until) }
        if blockers.contains(where: \.isUsagePlan), let plan = plannedLaunch(for: request, at: now) {
            date = max(date, plan.launchAt)
        }
        return date
    }
}
