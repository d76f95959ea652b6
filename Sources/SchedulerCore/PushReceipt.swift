import FoundationEssentials
import TaskState

extension SchedulerState {
    /// Held pushes of one app beyond this are coalesced away, oldest first, whatever their
    /// collapse ids.
    public static let maximumHeldPushesPerApp = 64
    /// Message ids remembered per app for telling duplicates.
    static let rememberedPushMessageIDs = 64
    /// How long after it was sent an `--expiration 0` push may still be delivered.
    static let nowOnlyTolerance: TimeInterval = 10

    /// A push arrives (`push` command): dropped (app switched off, a duplicate, `--expiration 0`
    /// and blocked), or held, coalescing older held pushes of the same collapse group. A push that
    /// can be delivered at once is delivered by the same command (``apply(_:now:)``).
    mutating func receivePush(_ request: PushRequest, command: Command, now: Date) -> Result<(String, HeldPush?), SchedulerError> {
        let appID = request.app
        guard let manifest = catalog.manifests[appID] else {
            return .failure(.unknownApp("app \(appID) has no usable manifest"))
        }
        guard manifest.backgroundModes.contains(.remoteNotification) else {
            return .failure(.notPermitted("\(appID)'s manifest does not declare the 'remote-notification' background mode needed for pushes"))
        }
        if let problem = request.problem { return .failure(.invalidCommand(problem)) }
        // What expired before this push came is dropped as expired, not counted as coalesced.
        expireHeldPushes(at: now)
        var record = app(appID)
        if let messageID = request.messageID {
            if record.recentPushMessageIDs?.contains(messageID) == true {
                self.record(Event(time: now, type: .pushDropped, app: appID, command: command.id, reason: "duplicate",
                                  message: "\(appID): push \(messageID) dropped: already received"))
                return .success(("dropped: message \(messageID) was already received", nil))
            }
            var ids = record.recentPushMessageIDs ?? []
            ids.append(messageID)
            record.recentPushMessageIDs = Array(ids.suffix(Self.rememberedPushMessageIDs))
            setApp(record)
        } else if apps[appID] == nil {
            setApp(record)
        }
        let id = HeldPush.newID()
        // The message id is named so a push server's messages can be told apart in the log.
        let from = (request.source.map { " from \($0)" } ?? "") + (request.messageID.map { " (message \($0))" } ?? "")
        self.record(Event(time: now, type: .pushReceived, app: appID, identifier: id, kind: .remoteNotification,
                          command: command.id, reason: "priority \(request.priority.rawValue)",
                          message: "\(appID): push \(id) received\(from) (priority \(request.priority.rawValue), \(request.payload.text.utf8.count) bytes)"))
        guard record.enabled else {
            self.record(Event(time: now, type: .pushDropped, app: appID, identifier: id, kind: .remoteNotification,
                              command: command.id, reason: "appDisabled",
                              message: "\(appID): push \(id) dropped: background work is switched off"))
            return .success(("dropped: background work is switched off for \(appID)", nil))
        }
        // `--expiration 0` (a date at or before the command's issue): deliver now or never. "Now"
        // is when it was sent: one applied long after (queued while no scheduler ran) is dropped.
        let nowOnly = request.expiration.map { $0 <= command.issuedAt } ?? false
        let lateBy = now.timeIntervalSince(command.issuedAt)
        if nowOnly && lateBy > Self.nowOnlyTolerance {
            self.record(Event(time: now, type: .pushDropped, app: appID, identifier: id, kind: .remoteNotification,
                              command: command.id, reason: "expiration0",
                              message: "\(appID): push \(id) dropped: expiration 0 and it arrived \(Self.seconds(lateBy.rounded(.down))) after it was sent"))
            return .success(("dropped: expiration 0 and it arrived \(Self.seconds(lateBy.rounded(.down))) after it was sent", nil))
        }
        if let expiration = request.expiration, !nowOnly, expiration <= now {
            self.record(Event(time: now, type: .pushExpired, app: appID, identifier: id, kind: .remoteNotification,
                              command: command.id, message: "\(appID): push \(id) expired before it arrived"))
            return .success(("expired: its expiration \(JSONFormat.string(from: expiration)) has passed", nil))
        }
        if request.type == .voip { return receiveVoIPPush(request, id: id, command: command, now: now) }
        var push = HeldPush(app: appID, id: id, payload: request.payload, priority: request.priority, receivedAt: now,
                            expiresAt: nowOnly ? now : request.expiration, collapseID: request.collapseID,
                            messageID: request.messageID, source: request.source, commandID: command.id)
        let blockers = pushBlockers(for: push, at: now)
        if !blockers.isEmpty && nowOnly {
            self.record(Event(time: now, type: .pushDropped, app: appID, identifier: id, kind: .remoteNotification,
                              command: command.id, reason: "expiration0",
                              message: "\(appID): push \(id) dropped: expiration 0 and it cannot be delivered now (\(blockers.map(\.rawValue).joined(separator: ", ")))"))
            return .success(("dropped: expiration 0 and it cannot be delivered now (\(blockers.map(\.label).joined(separator: ", ")))", nil))
        }
        push.coalescedCount = coalesce(into: push, now: now)
        setPush(push)
        if blockers.isEmpty { return .success(("received \(id)", push)) }
        let wait = nextPushReadiness(of: push, blockers: blockers, at: now).map { " until \(JSONFormat.string(from: $0))" } ?? ""
        return .success(("held \(id): \(blockers.map(\.label).joined(separator: ", "))\(wait)", push))
    }

    /// Removes the app's held pushes that `newer` replaces (same collapse group, and the oldest
    /// beyond ``maximumHeldPushesPerApp``), each with an event; returns how many pushes the new
    /// one stands for besides itself.
    private mutating func coalesce(into newer: HeldPush, now: Date) -> Int {
        let held = pushes.values.filter { $0.app == newer.app && !$0.isVoIP }.sorted { ($0.receivedAt, $0.id) < ($1.receivedAt, $1.id) }
        var replaced = held.filter { $0.collapseGroup == newer.collapseGroup }
        let others = held.filter { $0.collapseGroup != newer.collapseGroup }
        let excess = others.count - (Self.maximumHeldPushesPerApp - 1)
        if excess > 0 { replaced += others.prefix(excess) }
        var count = 0
        for old in replaced {
            removePush(old.key)
            // Saturating: a held push's count comes from a file.
            if old.collapseGroup == newer.collapseGroup { count = min(count, HeldPush.maximumCoalescedCount) + min(max(old.coalescedCount, 0), HeldPush.maximumCoalescedCount) + 1 }
            let group = old.collapseID.map { " (collapse id \($0))" } ?? ""
            record(Event(time: now, type: .pushCoalesced, app: old.app, identifier: old.id, kind: .remoteNotification,
                         reason: newer.id.rawValue,
                         message: "\(old.app): held push \(old.id)\(group) replaced by newer \(newer.id)"))
        }
        return min(count, HeldPush.maximumCoalescedCount)
    }

    /// Drops held pushes that can never be delivered: of an app switched off (a file from before),
    /// or whose manifest no longer declares `remote-notification`.
    mutating func dropUndeliverablePushes(now: Date) {
        for push in pushes.values.sorted(by: { $0.key < $1.key }) {
            if !app(push.app).enabled {
                dropHeldPush(push, code: "appDisabled", why: "background work is switched off", now: now)
            } else if let manifest = catalog.manifests[push.app], !manifest.backgroundModes.contains(.remoteNotification) {
                dropHeldPush(push, code: "notPermitted", why: "the manifest no longer declares the 'remote-notification' background mode", now: now)
            } else if push.isVoIP, catalog.manifests[push.app] == nil {
                // A VoIP push is never held: without a manifest to launch, it cannot ring at all.
                dropHeldPush(push, code: "noManifest", why: "the app has no usable manifest to launch", now: now)
            }
        }
    }

    /// Drops every held push of an app whose background work was switched off.
    mutating func dropPushes(ofDisabled appID: Identifier, now: Date) {
        for push in pushes.values.filter({ $0.app == appID }).sorted(by: { $0.id < $1.id }) {
            dropHeldPush(push, code: "appDisabled", why: "background work is switched off", now: now)
        }
    }

    /// Removes a held push for good: a `pushDropped` event with its reason's code and words.
    mutating func dropHeldPush(_ push: HeldPush, code: String, why: String, now: Date) {
        removePush(push.key)
        record(Event(time: now, type: .pushDropped, app: push.app, identifier: push.id, kind: .remoteNotification,
                     reason: code, message: "\(push.app): held push \(push.id) dropped: \(why)"))
    }

    /// The app's push handler answered (`answerPush`): the task completes, and the answer feeds
    /// the push budget rule.
    mutating func answerPush(app appID: Identifier, identifier: Identifier, result: FetchResult, command: String?,
                             now: Date) -> Result<String, SchedulerError> {
        let key = TaskKey(app: appID, identifier: identifier)
        guard let task = tasks[key], task.kind == .remoteNotification else {
            return .failure(.noSuchTask("no push being handled with identifier \(identifier) for \(appID)"))
        }
        return complete(app: appID, identifier: identifier, success: result != .failed, fetchResult: result,
                        command: command, now: now)
    }

    /// Records an app's answer to a push. Three `noData` answers in a row cut its hourly budget by
    /// one; `newData` restores it in full; see `docs/scheduling.md#background-pushes`.
    mutating func notePushAnswer(_ result: FetchResult, app appID: Identifier, now: Date) {
        var record = app(appID)
        record.lastPushResult = result
        record.lastPushResultAt = now
        switch result {
        case .newData:
            record.pushBudgetCut = nil
            record.pushNoDataInARow = nil
        case .noData:
            let inARow = min(max(record.pushNoDataInARow ?? 0, 0), 2) + 1
            if inARow >= 3 {
                record.pushNoDataInARow = nil
                setApp(record)
                cutPushBudget(of: appID, why: "answered noData 3 times in a row", now: now)
                return
            }
            record.pushNoDataInARow = inARow
        case .failed:
            break
        }
        setApp(record)
    }

    /// Cuts the app's hourly push budget by one (never under one push an hour).
    mutating func cutPushBudget(of appID: Identifier, why: String, now: Date) {
        var record = app(appID)
        let current = pushBudgetCut(of: appID)
        let cut = min(current + 1, settings.pushBudgetPerHour - 1)
        guard cut > current else { return }
        record.pushBudgetCut = cut
        setApp(record)
        self.record(Event(time: now, type: .throttled, app: appID, reason: "pushBudget",
                          message: "\(appID): push budget cut to \(settings.pushBudgetPerHour - cut) an hour: it \(why)"))
    }
}
