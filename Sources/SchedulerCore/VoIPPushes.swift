import FoundationEssentials
import TaskState

/// VoIP pushes (PushKit's `.voIP` type): delivered the moment they arrive, outside the push
/// budget, never coalesced or held, to the app's attached process or by launching it with
/// `BGTASK_LAUNCH_REASON=voipPush`. See `docs/scheduling.md#voip-pushes`.
extension SchedulerState {
    /// The launch reason of a VoIP push's delivery.
    public static let voipLaunchReason = "voipPush"

    /// A VoIP push that passed the checks every push gets (manifest, mode, duplicate, switched
    /// off, expiration): dropped when the app's VoIP pushes are blocked, else kept only until the
    /// same command's launch records it (``voipDelivery(_:at:)``).
    mutating func receiveVoIPPush(_ request: PushRequest, id: Identifier, command: Command,
                                  now: Date) -> Result<(String, HeldPush?), SchedulerError> {
        let appID = request.app
        if let blockedSince = app(appID).voip?.blockedSince {
            let why = "\(appID) failed to report \(settings.voipStrikes) calls in a row (blocked since \(JSONFormat.string(from: blockedSince))); a person must use the app first"
            record(Event(time: now, type: .pushDropped, app: appID, identifier: id, kind: .remoteNotification,
                         command: command.id, reason: "voipBlocked", message: "\(appID): VoIP push \(id) dropped: \(why)"))
            return .success(("dropped: \(why)", nil))
        }
        // Each delivered push is a report owed; the record of them is bounded, so a push beyond
        // the bound waits for nothing: it is dropped like a blocked one.
        let owed = (app(appID).voip?.debts.count ?? 0) + pushes.values.filter { $0.app == appID && $0.isVoIP }.count
        if owed >= VoIPDebt.maximumOwed {
            let why = "\(appID) already owes \(VoIPDebt.maximumOwed) call reports for VoIP pushes; report a call first"
            record(Event(time: now, type: .pushDropped, app: appID, identifier: id, kind: .remoteNotification,
                         command: command.id, reason: "voipOwed", message: "\(appID): VoIP push \(id) dropped: \(why)"))
            return .success(("dropped: \(why)", nil))
        }
        let push = HeldPush(app: appID, id: id, payload: request.payload, priority: request.priority, receivedAt: now,
                            expiresAt: request.expiration, collapseID: request.collapseID, messageID: request.messageID,
                            source: request.source, commandID: command.id, type: .voip)
        setPush(push)
        return .success(("received \(id)", push))
    }

    /// The launch that delivers a VoIP push now: a launch of its own (never merged into another,
    /// never waiting for one), handed to the app's attached process when one takes pushes.
    func voipDelivery(_ push: HeldPush, at now: Date) -> LaunchPlan? {
        guard let manifest = catalog.manifests[push.app] else { return nil }
        let request = PendingRequest(app: push.app, identifier: push.id, kind: .remoteNotification,
                                     submittedAt: push.receivedAt, commandID: push.commandID)
        return LaunchPlan(
            launchID: "\(push.app)-\(SafeNumber.int64(now.timeIntervalSince1970 * 1000, .down))-voip-\(push.id)", app: push.app,
            manifest: manifest, requests: [request], reason: Self.voipLaunchReason, simulated: false,
            handOver: pushHandOverTarget(app: push.app, voip: true), pushPayload: push.payload)
    }

    /// VoIP pushes left in `pushes/` by a scheduler that stopped before their launch was
    /// recorded: each goes out now, in a launch of its own.
    func heldVoIPDeliveries(at now: Date) -> [LaunchPlan] {
        pushes.values.filter(\.isVoIP).sorted { ($0.receivedAt, $0.id) < ($1.receivedAt, $1.id) }
            .compactMap { voipDelivery($0, at: now) }
    }

    /// A VoIP push was handed to process `pid`: its task carries the payload, and the app now
    /// owes a call report for it, by `voipReportSeconds` from now, on top of any it already owes.
    mutating func recordVoIPDelivery(_ push: HeldPush, plan: LaunchPlan, pid: Int32, processGroup: Int32?,
                                     processStartTicks: UInt64?, logOffset: Int64?, now: Date) {
        let budget = settings.budget(for: .remoteNotification)
        setTask(LaunchedTask(
            app: plan.app, identifier: push.id, kind: .remoteNotification, launchReason: Self.voipLaunchReason,
            simulated: false, pid: pid, processGroup: processGroup, processStartTicks: processStartTicks,
            launchID: plan.launchID, startedAt: now, deadline: now.addingTimeInterval(budget),
            expirationSignal: plan.manifest.expirationSignal, push: push, logOffset: logOffset))
        var appRecord = app(plan.app)
        var voip = appRecord.voip ?? VoIPState()
        voip.lastDelivery = now
        let due = now.addingTimeInterval(settings.voipReportSeconds)
        voip.setDebts(voip.debts + [VoIPDebt(push: push.id, pid: pid > 1 ? pid : nil, dueBy: due)])
        appRecord.voip = voip
        setApp(appRecord)
        let how = plan.handOver == nil ? "launched pid \(pid) for" : "handed to running pid \(pid):"
        record(Event(time: now, type: .pushDelivered, app: plan.app, identifier: push.id, kind: .remoteNotification,
                     pid: pid, command: push.commandID, reason: Self.voipLaunchReason,
                     message: "\(plan.app): \(how) VoIP push \(push.id) (outside the push budget; a call must be reported by \(JSONFormat.string(from: due)))",
                     logOffset: logOffset))
    }
}
