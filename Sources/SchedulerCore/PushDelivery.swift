import FoundationEssentials
import TaskState

extension SchedulerState {
    /// The app's hourly push budget after cuts (at least one).
    public func pushBudget(of appID: Identifier) -> Int {
        max(1, settings.pushBudgetPerHour - pushBudgetCut(of: appID))
    }

    /// The app's budget cut as recorded, within `0...pushBudgetPerHour`: `apps/<app>.json` is
    /// input, and a number out of range must not reach the arithmetic.
    func pushBudgetCut(of appID: Identifier) -> Int {
        min(max(apps[appID]?.pushBudgetCut ?? 0, 0), settings.pushBudgetPerHour)
    }

    /// Pushes delivered to the app in the hour before `now`.
    public func pushesDelivered(to appID: Identifier, inHourBefore now: Date) -> [Date] {
        let from = now.addingTimeInterval(-3600)
        return (apps[appID]?.pushDeliveries ?? []).filter { $0 > from && $0 <= now }
    }

    /// Pushes the app may still receive in the rolling hour at `now`.
    public func pushBudgetLeft(of appID: Identifier, at now: Date) -> Int {
        max(0, pushBudget(of: appID) - pushesDelivered(to: appID, inHourBefore: now).count)
    }

    /// Every reason `push` is not delivered at `now`, in a fixed order; empty means it may go.
    public func pushBlockers(for push: HeldPush, at now: Date) -> [PushBlocker] {
        var result: [PushBlocker] = []
        let record = app(push.app)
        if pushBudgetLeft(of: push.app, at: now) == 0 { result.append(.pushBudget) }
        if push.priority == .conserve && conditions.effective.lowPower { result.append(.lowPower) }
        if record.isThrottled(at: now) { result.append(.throttled) }
        // A call push being handled holds no background push back: it is outside their budget and order.
        if tasks.values.contains(where: { $0.app == push.app && $0.kind == .remoteNotification && $0.push?.isVoIP != true }) {
            result.append(.handlingPush)
        }
        if catalog.manifests[push.app] == nil { result.append(.noManifest) }
        return result
    }

    /// When a held push held back only by time (budget, throttle) may go.
    func nextPushReadiness(of push: HeldPush, blockers: [PushBlocker], at now: Date) -> Date? {
        guard !blockers.isEmpty, blockers.allSatisfy({ $0 == .pushBudget || $0 == .throttled }) else { return nil }
        var date = Date.distantPast
        if blockers.contains(.pushBudget) {
            // The delivery that frees a place when it leaves the window.
            let delivered = pushesDelivered(to: push.app, inHourBefore: now).sorted()
            let excess = delivered.count - pushBudget(of: push.app)
            if excess >= 0 { date = max(date, delivered[excess].addingTimeInterval(3600)) }
        }
        if blockers.contains(.throttled), let until = app(push.app).throttledUntil { date = max(date, until) }
        return date
    }

    /// The held push each app gets next: priority 10 first, then the oldest.
    func nextHeldPushes() -> [HeldPush] {
        var byApp: [Identifier: HeldPush] = [:]
        for push in pushes.values where !push.isVoIP {
            if let current = byApp[push.app], Self.deliveryOrder(current, push) { continue }
            byApp[push.app] = push
        }
        return byApp.values.sorted { $0.app < $1.app }
    }

    static func deliveryOrder(_ lhs: HeldPush, _ rhs: HeldPush) -> Bool {
        (rhs.priority.rawValue, lhs.receivedAt, lhs.id) < (lhs.priority.rawValue, rhs.receivedAt, rhs.id)
    }

    /// Adds the pushes deliverable at `now` (one per app) to `plans`: into the app's launch when
    /// one goes out this turn (one process takes both), else as a launch of their own, handed to
    /// the app's attached process when it registered a push handler.
    func addingPushDeliveries(to plans: [LaunchPlan], at now: Date) -> [LaunchPlan] {
        var plans = plans + heldVoIPDeliveries(at: now)
        for push in nextHeldPushes() where pushBlockers(for: push, at: now).isEmpty {
            guard let manifest = catalog.manifests[push.app] else { continue }
            let request = PendingRequest(app: push.app, identifier: push.id, kind: .remoteNotification,
                                         submittedAt: push.receivedAt, commandID: push.commandID)
            let target = pushHandOverTarget(app: push.app)
            // Into the app's launch of this turn when the same process takes both (the same
            // attached process, or a new one for both); else a launch of its own.
            if let index = plans.firstIndex(where: { $0.app == push.app && $0.pushPayload == nil && $0.handOver?.pid == target?.pid }) {
                plans[index].requests.append(request)
                plans[index].pushPayload = push.payload
                continue
            }
            plans.append(LaunchPlan(
                launchID: "\(push.app)-\(SafeNumber.int64(now.timeIntervalSince1970 * 1000, .down))-push", app: push.app,
                manifest: manifest, requests: [request], reason: TaskKind.remoteNotification.rawValue, simulated: false,
                handOver: target, pushPayload: push.payload))
        }
        return plans
    }

    /// The attached process that takes the app's pushes of that type: a background push only if
    /// it registered a push handler, a VoIP push only if it registered for VoIP pushes.
    func pushHandOverTarget(app appID: Identifier, voip: Bool = false) -> AttachedProcess? {
        guard let attached = apps[appID]?.attachedProcess,
              (voip ? attached.acceptsVoIPPushes : attached.acceptsPushes) == true,
              !tasks.values.contains(where: { $0.pid == attached.pid && $0.state == .expiring }) else { return nil }
        return attached
    }

    /// The launch that delivers `push` now, if nothing blocks it (the `push` command's own),
    /// with the app's requests due now when one process takes both.
    func pushDelivery(_ push: HeldPush, at now: Date) -> LaunchPlan? {
        if push.isVoIP { return voipDelivery(push, at: now) }
        guard pushBlockers(for: push, at: now).isEmpty else { return nil }
        let due = dueLaunches(at: now).filter { $0.app == push.app }
        return addingPushDeliveries(to: due, at: now).first { plan in plan.requests.contains { $0.identifier == push.id } }
    }

    /// Held pushes past their expiration are dropped, each with an event.
    mutating func expireHeldPushes(at now: Date) {
        for push in pushes.values.sorted(by: { $0.key < $1.key }) {
            guard let expiresAt = push.expiresAt, expiresAt <= now else { continue }
            removePush(push.key)
            record(Event(time: now, type: .pushExpired, app: push.app, identifier: push.id, kind: .remoteNotification,
                         message: "\(push.app): held push \(push.id) expired undelivered"))
        }
    }

    /// A push's task was recorded as launched: the held push leaves `pushes/` and counts against
    /// the app's budget.
    mutating func takeDeliveredPush(_ key: TaskKey, now: Date) -> HeldPush? {
        guard let push = pushes[key] else { return nil }
        removePush(key)
        // A VoIP push is outside the budget.
        if push.isVoIP { return push }
        var record = app(key.app)
        record.pushDeliveries = pushesDelivered(to: key.app, inHourBefore: now) + [now]
        setApp(record)
        return push
    }

    /// The next time a held push becomes deliverable or expires by time alone.
    func nextPushWake(after now: Date) -> Date? {
        var candidates: [Date] = []
        for push in pushes.values {
            if let expiresAt = push.expiresAt { candidates.append(expiresAt) }
            if push.isVoIP, catalog.manifests[push.app] != nil { candidates.append(now) }
        }
        for push in nextHeldPushes() {
            let blockers = pushBlockers(for: push, at: now)
            if blockers.isEmpty {
                candidates.append(now)
            } else if let ready = nextPushReadiness(of: push, blockers: blockers, at: now) {
                candidates.append(ready)
            }
        }
        return candidates.min()
    }

    /// Whether a held push waits on a probed (not simulated) low power mode.
    func isPushWaitingOnConditions(at now: Date) -> Bool {
        conditions.isProbedFromFiles(.lowpower) && nextHeldPushes().contains { pushBlockers(for: $0, at: now).contains(.lowPower) }
    }
}
