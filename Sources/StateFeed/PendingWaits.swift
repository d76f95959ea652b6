import FoundationEssentials
import SchedulerCore
import TaskState

/// Why one pending request waits, as the dashboard shows it: what ``SchedulerState/launchTurn(at:)``
/// says of it, with the plan and hold end behind a usage or coalescing wait. The machine's
/// conditions are not in it: they are the group's, joined when shown (``blockers(under:)``), so a
/// change of conditions changes no wait but those the launch turn decides.
public struct RequestWait: Sendable, Equatable {
    /// What holds the request apart from the machine's conditions (no ``Blocker/condition``
    /// among them), in the policy's order; for a request nothing holds, the launch turn's word
    /// (coalescing, the launch limit).
    public var ownBlockers: [Blocker]
    /// What the request needs of the conditions.
    public var group: RequestConditionGroup
    /// The usage plan that holds the request, when a blocker is one (``Blocker/isUsagePlan``).
    public var plan: UsagePlan?
    /// When the hold ends, for a request held by coalescing.
    public var coalescingEnds: Date?
    /// The app's week of use (``UsageModel/hoursPerWeek`` likelihoods) for an app refresh of an
    /// app with a usage model.
    public var usageWeek: [Double]?

    /// Every blocker of the request under the conditions `effective`, as the policy lists them.
    public func blockers(under effective: Conditions) -> [Blocker] {
        group.blockers(joining: ownBlockers, under: effective)
    }
}

/// Every pending request's wait, kept current change by change. The scheduler's policy
/// (``SchedulerState/blockers(for:at:)``) answers for one request from that request, its key's
/// task, its app's record, usage and manifest, the conditions, the settings and the clock, never
/// from other requests; and the conditions only through the request's group of needs
/// (``RequestConditionGroup``), which a wait keeps beside its own blockers. So after a change only
/// these requests are asked again:
/// - the requests read again (added, changed, gone);
/// - those whose key's task started or ended;
/// - every request of an app whose record changed or whose throttle ended since the last update;
/// - every request of an app with a usage history, at every update (its model is rebuilt as of
///   now, and a usage plan or the recent-use rule moves with the clock);
/// - those whose `earliestBeginDate` passed since the last update (a queue by date);
/// - all of them when the settings or the manifests changed, when every file was read again, or
///   when the clock went back.
///
/// A change of conditions asks none of them again: it only opens or closes groups to the launch
/// turn. Only the launch turn looks across requests (coalescing, the launch limit), and only for
/// requests nothing holds: while there are such requests, the turn is worked out over them and
/// the requests that may join their hold, not over every request.
public final class PendingWaits {
    /// The wait of every pending request, by key.
    public private(set) var waits: [TaskKey: RequestWait] = [:]
    /// The policy's state at the last update: every record but the pending requests.
    public private(set) var state: SchedulerState?
    /// What ``SchedulerState/blockers(for:at:)`` answered at the last update, but the conditions'
    /// part, and what the request needs of the conditions.
    private var known: [TaskKey: Known] = [:]
    private var keysByApp: [Identifier: Set<TaskKey>] = [:]
    /// Requests held by nothing of their own, by group: where the group's conditions let them
    /// through, the launch turn decides for them.
    private var ready: [RequestConditionGroup: Set<TaskKey>] = [:]
    /// Requests held only by their date, with it, by group: those that may join a coalescing hold.
    private var dateOnly: [RequestConditionGroup: [TaskKey: Date]] = [:]
    /// The requests the last launch turn decided for.
    private var decided: Set<TaskKey> = []
    private var dates = DateQueue()
    private var lastNow: Date?

    private struct Known {
        var own: [Blocker]
        var group: RequestConditionGroup
    }

    public init() {}

    /// Brings every wait up to date at `now` and answers the keys of the requests read again
    /// (`changed`, or every key when it is nil) and of those whose wait changed, appeared or went.
    /// - Parameters:
    ///   - records: every record but the pending requests (their `requests` are ignored).
    ///   - changed: the requests read since the last update; nil when any may have changed.
    ///   - request: a pending request by key, nil when there is none.
    ///   - allKeys: every pending request's key (asked only when every request is looked at).
    ///   - configurationChanged: the settings or manifests were read again.
    public func update(records: StateSnapshot, changed: Set<TaskKey>?, request: (TaskKey) -> PendingRequest?,
                       allKeys: () -> [TaskKey], settings: SchedulerSettings, catalog: ManifestCatalog,
                       configurationChanged: Bool, now: Date) -> Set<TaskKey> {
        var records = records
        records.requests = []
        let next = SchedulerState(reading: records, settings: settings, catalog: catalog, now: now)
        let previous = state
        state = next
        defer { lastNow = now }
        var answer = Set<TaskKey>()
        var weeks: [Identifier: [Double]?] = [:]
        func week(_ app: Identifier) -> [Double]? {
            if let known = weeks[app] { return known }
            let week = next.usageModels[app].map { model in (0..<UsageModel.hoursPerWeek).map(model.likelihood(hourOfWeek:)) }
            weeks[app] = week
            return week
        }
        // `queue`: put the request's date in the queue; needless when its file was not read
        // again and its date did not come out of the queue (the date in the queue still holds).
        func ask(_ key: TaskKey, queue: Bool = true) {
            guard let pending = request(key) else {
                forget(key)
                if waits.removeValue(forKey: key) != nil { answer.insert(key) }
                return
            }
            let own = next.blockers(for: pending, at: now).filter { $0.condition == nil }
            let group = RequestConditionGroup(pending)
            // Known and held as before: the indexes hold it already.
            if queue || known[key].map({ $0.own != own || $0.group != group }) ?? true {
                remember(pending, own: own, group: group, queue: queue)
            }
            let wait = RequestWait(ownBlockers: own, group: group,
                                   plan: own.contains(where: \.isUsagePlan) ? next.usagePlan(for: pending, at: now) : nil,
                                   usageWeek: pending.kind == .appRefresh ? week(pending.app) : nil)
            if waits[key] != wait {
                waits[key] = wait
                answer.insert(key)
            }
        }

        let everything = changed == nil || configurationChanged || previous == nil || lastNow.map { now < $0 } ?? true
        if everything {
            let keys = allKeys()
            let present = Set(keys)
            for key in waits.keys where !present.contains(key) {
                waits[key] = nil
                answer.insert(key)
            }
            known = [:]
            keysByApp = [:]
            ready = [:]
            dateOnly = [:]
            decided = []
            dates = DateQueue()
            for key in keys { ask(key) }
            // A request read again may read differently with the same wait.
            answer.formUnion(changed ?? present)
        } else if let previous, let changed, let lastNow {
            var due = Set<TaskKey>()
            while let key = dates.popFirst(notAfter: now) { due.insert(key) }
            var asked = changed.union(due)
            var apps = Set<Identifier>()
            for id in Set(previous.apps.keys).union(next.apps.keys) where previous.apps[id] != next.apps[id] { apps.insert(id) }
            for (id, record) in next.apps {
                if let until = record.throttledUntil, until > lastNow, until <= now { apps.insert(id) }
            }
            apps.formUnion(previous.usage.keys)
            apps.formUnion(next.usage.keys)
            for app in apps { asked.formUnion(keysByApp[app] ?? []) }
            for key in Set(previous.tasks.keys).symmetricDifference(next.tasks.keys) where known[key] != nil { asked.insert(key) }
            for key in asked { ask(key, queue: changed.contains(key) || due.contains(key)) }
            answer.formUnion(changed)
        }
        decideTurn(records: records, request: request, settings: settings, catalog: catalog, now: now, week: week, answer: &answer)
        if dates.count > 2 * max(known.count, 64) { rebuildDates(request: request) }
        return answer
    }

    /// The launch turn's word for the requests nothing holds (coalescing, the launch limit): those
    /// of no blocker of their own in the groups the conditions let through, from a state holding
    /// them and the requests that may join their hold: every request held only by its date
    /// within the coalescing window after the latest of them is ready. The turn looks at no other
    /// request, so its word is the same as over all of them. A request the last turn decided for
    /// and this one does not (its group closed, say) goes back to its own blockers.
    private func decideTurn(records: StateSnapshot, request: (TaskKey) -> PendingRequest?, settings: SchedulerSettings,
                            catalog: ManifestCatalog, now: Date, week: (Identifier) -> [Double]?, answer: inout Set<TaskKey>) {
        let effective = state?.conditions.effective ?? Conditions()
        let open = Set(ready.keys).union(dateOnly.keys).filter { $0.conditionBlockers(under: effective).isEmpty }
        let candidates = open.flatMap { ready[$0] ?? [] }.compactMap(request)
        let left = decided
        decided = Set(candidates.map(\.key))
        for key in left where !decided.contains(key) {
            guard let own = known[key], let wait = waits[key], wait.ownBlockers != own.own || wait.coalescingEnds != nil else { continue }
            waits[key] = RequestWait(ownBlockers: own.own, group: own.group, plan: wait.plan, usageWeek: wait.usageWeek)
            answer.insert(key)
        }
        guard let latest = candidates.map(\.readyDate).max() else { return }
        let windowEnd = latest.addingTimeInterval(settings.coalescingWindowSeconds)
        var subset = records
        subset.requests = candidates
        for group in open {
            for (key, date) in dateOnly[group] ?? [:] where date <= windowEnd {
                if let joining = request(key) { subset.requests.append(joining) }
            }
        }
        let turn = SchedulerState(reading: subset, settings: settings, catalog: catalog, now: now).launchTurn(at: now)
        for pending in candidates {
            let blockers = turn.blockers[pending.key] ?? []
            let wait = RequestWait(ownBlockers: blockers, group: RequestConditionGroup(pending),
                                   coalescingEnds: blockers.contains(.coalescing) ? turn.coalescingEnds : nil,
                                   usageWeek: pending.kind == .appRefresh ? week(pending.app) : nil)
            if waits[pending.key] != wait {
                waits[pending.key] = wait
                answer.insert(pending.key)
            }
        }
    }

    private func remember(_ request: PendingRequest, own: [Blocker], group: RequestConditionGroup, queue: Bool) {
        let key = request.key
        if let old = known.updateValue(Known(own: own, group: group), forKey: key) {
            unindex(key, old)
        } else {
            keysByApp[key.app, default: []].insert(key)
        }
        if own.isEmpty { ready[group, default: []].insert(key) }
        if own == [.earliestBeginDate], let date = request.earliestBeginDate { dateOnly[group, default: [:]][key] = date }
        if queue, own.contains(.earliestBeginDate), let date = request.earliestBeginDate { dates.insert(date, key) }
    }

    private func unindex(_ key: TaskKey, _ old: Known) {
        if old.own.isEmpty { ready[old.group]?.remove(key) }
        if old.own == [.earliestBeginDate] { dateOnly[old.group]?[key] = nil }
    }

    private func forget(_ key: TaskKey) {
        if let old = known.removeValue(forKey: key) { unindex(key, old) }
        keysByApp[key.app]?.remove(key)
        if keysByApp[key.app]?.isEmpty == true { keysByApp[key.app] = nil }
        decided.remove(key)
    }

    /// The queue keeps a date for each time a request was asked while its date held it; once
    /// most of them are stale, it is rebuilt from the requests still held by their dates.
    private func rebuildDates(request: (TaskKey) -> PendingRequest?) {
        dates = DateQueue()
        for (key, entry) in known where entry.own.contains(.earliestBeginDate) {
            if let date = request(key)?.earliestBeginDate { dates.insert(date, key) }
        }
    }
}
