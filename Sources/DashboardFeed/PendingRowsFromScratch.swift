import Dashboard
import FoundationEssentials
import SchedulerCore
import TaskState

extension DashboardSnapshot {
    /// Every pending row of `records` worked out from scratch: the whole launch turn over every
    /// request, then each request's blockers, usage plan and week, and each held push's blockers.
    /// What a snapshot built in one go shows (`bgtop --host`, the first reading); ``LivePendingRows``
    /// keeps the same rows current change by change. A request's row keeps its own blockers and
    /// its group of needs, and joins the conditions' blockers when shown, as the rows kept current do.
    public static func pendingRows(of records: StateSnapshot, state: SchedulerState, now: Date) -> [PendingRow] {
        let turn = state.launchTurn(at: now)
        return records.requests.map { request in
            let blockers = turn.blockers[request.key] ?? state.blockers(for: request, at: now)
            let plan = blockers.contains(where: \.isUsagePlan) ? state.usagePlan(for: request, at: now) : nil
            let model = request.kind == .appRefresh ? state.usageModels[request.app] : nil
            var row = PendingRow(request: request, ownBlockers: blockers.filter { $0.condition == nil },
                                 conditionGroup: RequestConditionGroup(request), plannedLaunch: plan?.launchAt,
                                 predictedUse: plan?.predictedUse?.date,
                                 usageWeek: model.map { model in (0..<UsageModel.hoursPerWeek).map(model.likelihood(hourOfWeek:)) })
            if blockers.contains(.coalescing) { row.coalescingEnds = turn.coalescingEnds }
            return row
        } + records.pushes.map { push in
            PendingRow(push: push, blockers: state.pushBlockers(for: push, at: now))
        }
    }
}
