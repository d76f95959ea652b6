import Foundation
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
    /// horizon, or the planned time has come).
    public func usagePlan(for request: PendingRequest, at now: Date) -> UsagePlan? {
        guard settings.usagePrediction, request.kind == .appRefresh, let last = usage[request.app]?.lastUse else { return nil }
        if now.timeIntervalSince(last) > settings.staleAfterDays * 86_400 {
            guard let launched = apps[request.app]?.lastLaunchAt else { return nil }
            let next = launched.addingTimeInterval(86_400)
            return next > now ? UsagePlan(blocker: .rarelyUsed, launchAt: next) : nil
        }
        guard let model = usageModels[request.app],
              let prediction = model.nextUse(after: max(now, request.readyDate), within: settings.predictionHorizonSeconds,
                                             minimumConfidence: settings.predictionMinimumConfidence) else { return nil }
        let launchAt = prediction.date.addingTimeInterval(-settings.predictionLeadSeconds)
        return launchAt > now ? UsagePlan(blocker: .predictedUse, launchAt: launchAt, predictedUse: prediction) : nil
    }

    /// The use a launch at `now` of `request` prepares for, when prediction placed it: a confident
    /// use within the lead (and a minute) from now. For the `launched` event's words.
    func predictedUse(servedBy request: PendingRequest, at now: Date) -> UsageModel.Prediction? {
        guard settings.usagePrediction, request.kind == .appRefresh, let model = usageModels[request.app],
              let prediction = model.nextUse(after: now, within: settings.predictionLeadSeconds + 60,
                                             minimumConfidence: settings.predictionMinimumConfidence) else { return nil }
        return prediction
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
}
