import FoundationEssentials
import TaskState

/// One process launch decided by the policy: an app and the requests it is handed.
public struct LaunchPlan: Sendable, Equatable {
    public var launchID: String
    public var app: Identifier
    public var manifest: AppManifest
    /// The requests handed over, oldest first. They are consumed when the launch is recorded.
    public var requests: [PendingRequest]
    /// `BGTASK_LAUNCH_REASON`: `appRefresh`, `processing`, `simulated`, `urlSession` or `remoteNotification`.
    public var reason: String
    public var simulated: Bool
    /// The app's running process that takes these tasks instead of a new one, when one is
    /// attached and has handlers for all of them.
    public var handOver: AttachedProcess?
    /// The payload of the push among the requests, for `BGTASK_PUSH_PAYLOAD`: a program that is
    /// not written with the library reads it there rather than in its task file.
    public var pushPayload: PushPayload?
}

extension SchedulerState {
    /// The launches due at `now` (``launchTurn(at:)``'s plans): runnable requests of one app go
    /// out together, coalesced with other apps' requests about to come due.
    public func dueLaunches(at now: Date) -> [LaunchPlan] {
        dueTurn(at: now).plans
    }

    static func launchOrder(_ lhs: PendingRequest, _ rhs: PendingRequest) -> Bool {
        (lhs.readyDate, lhs.kind, lhs.identifier) < (rhs.readyDate, rhs.kind, rhs.identifier)
    }

    /// `_simulateLaunchForTaskWithIdentifier:`: a pending request, launched now whatever its date
    /// and constraints.
    mutating func simulatedLaunch(identifier: Identifier, app: Identifier?, now: Date) -> Result<LaunchPlan, SchedulerError> {
        let candidates = requests.values.filter { $0.identifier == identifier && (app == nil || $0.app == app) }
        guard !candidates.isEmpty else {
            return .failure(.noSuchRequest("no task request with identifier \(identifier) has been scheduled"))
        }
        guard candidates.count == 1, let request = candidates.first else {
            let apps = candidates.map(\.app.rawValue).sorted().joined(separator: ", ")
            return .failure(.ambiguous("identifier \(identifier) is pending for several apps (\(apps)); pass --app"))
        }
        guard tasks[request.key] == nil else {
            return .failure(.alreadyRunning("task with identifier \(identifier) is already running"))
        }
        guard let manifest = catalog.manifests[request.app] else {
            return .failure(.unknownApp("app \(request.app) has no usable manifest"))
        }
        return .success(LaunchPlan(
            launchID: "\(request.app)-\(SafeNumber.int64(now.timeIntervalSince1970 * 1000, .down))-simulated", app: request.app,
            manifest: manifest, requests: [request], reason: "simulated", simulated: true,
            handOver: handOverTarget(app: request.app, identifiers: [request.identifier])))
    }

    /// The process for `plan` is running: the requests become tasks with their budgets. `logOffset`
    /// is where the launch's output starts in the app's log (recorded on its tasks and events).
    public mutating func recordLaunch(_ plan: LaunchPlan, pid: Int32, processGroup: Int32?, processStartTicks: UInt64?,
                                      logOffset: Int64? = nil, now: Date) {
        for request in plan.requests {
            if request.kind == .remoteNotification {
                recordPushDelivery(request.key, plan: plan, pid: pid, processGroup: processGroup,
                                   processStartTicks: processStartTicks, logOffset: logOffset, now: now)
                continue
            }
            removeRequest(request.key)
            let task = LaunchedTask(
                app: plan.app, identifier: request.identifier, kind: request.kind,
                launchReason: plan.simulated ? plan.reason : request.kind.rawValue,
                simulated: plan.simulated, pid: pid, processGroup: processGroup, processStartTicks: processStartTicks,
                launchID: plan.launchID, startedAt: now, deadline: now.addingTimeInterval(settings.budget(for: request.kind)),
                expirationSignal: plan.manifest.expirationSignal, logOffset: logOffset)
            setTask(task)
            let late = request.earliestBeginDate.flatMap { earliest -> String? in
                guard !plan.simulated, now >= earliest else { return nil }
                return String(printf: ", %.1f s after its earliest begin date", now.timeIntervalSince(earliest))
            } ?? ""
            let how = plan.handOver == nil ? "launched pid \(pid) for" : "handed to running pid \(pid):"
            let placed = plan.simulated ? nil : predictedUse(servedBy: request, at: now).map { prediction in
                ", placed by usage prediction for a use expected at \(TimeOfDay.text(prediction.date, zone: timeZone))"
            }
            record(Event(time: now, type: .launched, app: plan.app, identifier: request.identifier, kind: request.kind,
                         pid: pid, command: plan.simulated ? request.commandID : nil, reason: plan.reason,
                         message: "\(plan.app): \(how) \(request.identifier) (\(plan.reason), budget \(SafeNumber.secondsText(settings.budget(for: request.kind).rounded(.down))) s\(late)\(placed ?? ""))",
                         logOffset: logOffset))
        }
        if plan.handOver == nil {
            noteProcessStarted(plan, pid: pid, processGroup: processGroup, processStartTicks: processStartTicks, now: now)
        }
        var record = app(plan.app)
        record.launchCount = SafeNumber.sum(record.launchCount, 1)
        if plan.handOver == nil { noteBackgroundLaunch(of: &record) }
        record.lastLaunchAt = now
        record.lastLaunchReason = plan.reason
        record.activity = record.activity ?? AppActivity()
        record.activity?.count(.launch, at: now)
        if !plan.simulated, plan.requests.contains(where: { $0.kind == .appRefresh }) { record.lastRefreshLaunchAt = now }
        setApp(record)
        noteSessionLaunch(plan, now: now)
    }

    /// A push of `plan` is handed to the process: its task carries the payload.
    private mutating func recordPushDelivery(_ key: TaskKey, plan: LaunchPlan, pid: Int32, processGroup: Int32?,
                                             processStartTicks: UInt64?, logOffset: Int64?, now: Date) {
        guard let push = takeDeliveredPush(key, now: now) else { return }
        if push.isVoIP { return recordVoIPDelivery(push, plan: plan, pid: pid, processGroup: processGroup, processStartTicks: processStartTicks, logOffset: logOffset, now: now) }
        let budget = settings.budget(for: .remoteNotification)
        setTask(LaunchedTask(
            app: plan.app, identifier: key.identifier, kind: .remoteNotification,
            launchReason: TaskKind.remoteNotification.rawValue, simulated: false, pid: pid, processGroup: processGroup,
            processStartTicks: processStartTicks, launchID: plan.launchID, startedAt: now,
            deadline: now.addingTimeInterval(budget), expirationSignal: plan.manifest.expirationSignal, push: push,
            logOffset: logOffset))
        let how = plan.handOver == nil ? "launched pid \(pid) for" : "handed to running pid \(pid):"
        let waited = now.timeIntervalSince(push.receivedAt) >= 1 ? String(printf: ", held %.1f s", now.timeIntervalSince(push.receivedAt)) : ""
        let coalesced = push.coalescedCount > 0 ? ", \(push.coalescedCount) older coalesced" : ""
        record(Event(time: now, type: .pushDelivered, app: plan.app, identifier: key.identifier, kind: .remoteNotification,
                     pid: pid, command: push.commandID, reason: TaskKind.remoteNotification.rawValue,
                     message: "\(plan.app): \(how) push \(key.identifier) (budget \(SafeNumber.secondsText(budget.rounded(.down))) s, \(pushBudgetLeft(of: plan.app, at: now)) push(es) left this hour\(waited)\(coalesced))",
                     logOffset: logOffset))
    }

    /// The process for `plan` could not be started: the failure is logged and the requests are
    /// consumed, except for a simulated launch, which is refused and changes nothing.
    public mutating func recordLaunchFailure(_ plan: LaunchPlan, reason: String, now: Date) {
        noteSessionLaunch(plan, now: now)
        for request in plan.requests {
            if request.kind == .remoteNotification, let push = pushes[request.key] {
                dropHeldPush(push, code: "launchFailed", why: "could not launch \(plan.manifest.executable): \(reason)", now: now)
                continue
            }
            if !plan.simulated { removeRequest(request.key) }
            record(Event(time: now, type: .launchFailed, app: plan.app, identifier: request.identifier, kind: request.kind,
                         reason: plan.reason, message: "\(plan.app): could not launch \(plan.manifest.executable): \(reason)"))
        }
    }
}
