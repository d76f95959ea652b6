import FoundationEssentials
import TaskState

/// When a due app refresh is planned because of how the app is used, and why.
public struct UsagePlan: Sendable, Equatable {
    /// `predictedUse` (waiting for the predicted use, less the lead) or `rarelyUsed` (at most one
    /// refresh a day).
    public var blocker: Blocker
    /// When the request may launch.
    public var launchAt: Date
    /// The predicted use it prepares for, and how likely the model thinks it is.
    public var predictedUse: UsageModel.Prediction?
}

extension SchedulerState {
    /// The plan usage prediction makes for `request` at `now`, when it holds it back; `nil` when
    /// it does not (prediction off, not an app refresh, no history, no confident use within the
    /// horizon after the request became ready, or the planned time has come).
    public func usagePlan(for request: PendingRequest, at now: Date) -> UsagePlan? {
        guard let plan = plannedLaunch(for: request, at: now), plan.launchAt > now else { return nil }
        return plan
    }

    /// The plan for `request`, whether or not its time has come. A predicted use is looked for
    /// once, from when the request became ready: the wait is bounded by the horizon, and a plan
    /// whose time passed while something else held the request is not made again for a later use.
    func plannedLaunch(for request: PendingRequest, at now: Date) -> UsagePlan? {
        guard settings.usagePrediction, request.kind == .appRefresh, let last = usage[request.app]?.lastUse else { return nil }
        if now.timeIntervalSince(last) > settings.staleAfterDays * 86_400 {
            guard let refreshed = apps[request.app]?.lastRefreshLaunchAt else { return nil }
            return UsagePlan(blocker: .rarelyUsed, launchAt: refreshed.addingTimeInterval(86_400))
        }
        guard let model = usageModels[request.app] else { return nil }
        guard let prediction = model.nextUse(after: request.readyDate, within: settings.predictionHorizonSeconds,
                                             minimumConfidence: settings.predictionMinimumConfidence) else {
            return usageRatePlan(for: request, history: usage[request.app], now: now)
        }
        // Before the habit's early uses too, not only its mean.
        return UsagePlan(blocker: .predictedUse, launchAt: prediction.date.addingTimeInterval(-settings.predictionLeadSeconds - prediction.spread),
                         predictedUse: prediction)
    }

    /// With no habit to prepare for, an app is refreshed about as often as it is used: at most
    /// twice per mean gap between its uses over the half-life (between 30 minutes and a day).
    private func usageRatePlan(for request: PendingRequest, history: UsageHistory?, now: Date) -> UsagePlan? {
        // Like a habit, a rate needs two weeks of watching: before that the app runs as before.
        guard let history, let first = history.uses.first, now.timeIntervalSince(first) >= UsageModel.minimumWeeks * 7 * 86_400,
              let refreshed = apps[request.app]?.lastRefreshLaunchAt else { return nil }
        let window = min(settings.usageHalfLifeDays * 86_400, now.timeIntervalSince(first))
        let from = now.addingTimeInterval(-window)
        let recent = history.uses.reversed().prefix { $0 >= from }.count
        // Twice per mean gap: a use lands at a random moment, and half the gap is its expected wait.
        let gap = min(max(window / Double(max(recent, 1)) / 2, 1800), 86_400)
        return UsagePlan(blocker: .usageRate, launchAt: refreshed.addingTimeInterval(gap))
    }

    /// The use a launch at `now` of `request` prepares for, when prediction placed it: it made
    /// the request wait past its ready time, and that time has come. For the `launched` event.
    func predictedUse(servedBy request: PendingRequest, at now: Date) -> UsageModel.Prediction? {
        guard let plan = plannedLaunch(for: request, at: now), plan.blocker == .predictedUse,
              plan.launchAt > request.readyDate, plan.launchAt <= now else { return nil }
        return plan.predictedUse
    }

    /// `appUsed`: a person used the app at `uses`; the model learns from them.
    mutating func recordUses(app appID: Identifier, uses: [Date], command: String?, now: Date) -> Result<String, SchedulerError> {
        guard catalog.manifests[appID] != nil || apps[appID] != nil else {
            return .failure(.unknownApp("app \(appID) has no manifest"))
        }
        let before = usage[appID]?.uses.count ?? 0
        let history = (usage[appID] ?? UsageHistory(app: appID)).adding(uses, now: now)
        setUsage(history, now: now)
        let latest = uses.max().map { ", latest \(JSONFormat.string(from: $0))" } ?? ""
        let added = history.uses.count - before
        record(Event(time: now, type: .appUsed, app: appID, command: command,
                     message: "\(appID): \(uses.count) use(s) recorded\(latest); \(history.uses.count) known"))
        return .success("recorded \(uses.count) use(s) of \(appID) (\(max(0, added)) new, \(history.uses.count) known)")
    }

    /// Rebuilds every app's model as of `now` (hourly in the scheduler, so likelihoods age even
    /// without new uses; at `now` in readers, so they judge as the scheduler does).
    public mutating func rebuildUsageModels(now: Date) {
        for history in usage.values { setUsage(history, now: now, recordChange: false) }
    }
}
