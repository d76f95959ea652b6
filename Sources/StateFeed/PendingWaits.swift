import Foundation
import SchedulerCore
import TaskState

/// Why one pending request waits, as the dashboard shows it: what ``SchedulerState/launchTurn(at:)``
/// says of it, with the plan and hold end behind a usage or coalescing wait.
public struct RequestWait: Sendable, Equatable {
    public var blockers: [Blocker]
    /// The usage plan that holds the request, when a blocker is one (``Blocker/isUsagePlan``).
    public var plan: UsagePlan?
    /// When the hold ends, for a request held by coalescing.
    public var coalescingEnds: Date?
    /// The app's week of use (``UsageModel/hoursPerWeek`` likelihoods) for an app refresh of an
    /// app with a usage model.
    public var usageWeek: [Double]?
}

/// Every pending request's wait, kept current change by change. The scheduler's policy
/// (``SchedulerState/blockers(for:at:)``) answers for one request from that request, its key's
/// task, its app's record, usage and manifest, the conditions, the settings and the clock, never
/// from other requests; so after a change only these requests are asked again:
/// - the requests read again (added, changed, gone);
/// - those whose key's task started or ended;
/// - every request of an app whose record changed or whose throttle ended since the last update;
/// - every request of an app with a usage history, at every update (its model is rebuilt as of
///   now, and a usage plan or the recent-use rule moves with the clock);
/// - those whose `earliestBeginDate` passed since the last update (a queue by date);
/// - after a change of conditions, the requests of each group of needs (``RequestConditionGroup``)
///   whose condition blockers changed: the conditions reach a wait through nothing else;
/// - all of them when the settings or the manifests changed, when every file was read again, or
///   when the clock went back.
///
/// Only the launch turn looks across requests (coalescing, the launch limit), and only for
/// requests nothing else holds: while there are such requests, the turn is worked out over them
/// and the requests that may join their hold, not over every request.
public final class PendingWaits {
    /// The wait of every pending request, by key.
    public private(set) var waits: [TaskKey: RequestWait] = [:]
    /// The policy's state at the last update: every record but the pending requests.
    public private(set) var state: SchedulerState?
    /// What ``SchedulerState/blockers(for:at:)`` answered at the last update, before the turn,
    /// and what the request needs of the conditions.
    private var known: [TaskKey: Known] = [:]
    private var keysByApp: [Identifier: Set<TaskKey>] = [:]
    private var keysByGroup: [RequestConditionGroup: Set<TaskKey>] = [:]
    /// Requests held by nothing of their own: the launch turn decides for them.
    private var free: Set<TaskKey> = []
    /// Requests held only by their date, with it: those that may join a coalescing hold.
    private var dateOnly: [TaskKey: Date] = [:]
    private var dates = DateQueue()
    private var lastNow: Date?

    private struct Known {
        var blockers: [Blocker]
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
            let blockers = next.blockers(for: pending, at: now)
            // Known and held as before: the indexes hold it already.
            if queue || known[key]?.blockers != blockers { remember(pending, blockers: blockers, queue: queue) }
            let wait = RequestWait(blockers: blockers,
                                   plan: blockers.contains(where: \.isUsagePlan) ? next.usagePlan(for: pending, at: now) : nil,
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
            keysByGroup = [:]
            free = []
            dateOnly = [:]
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
            let (before, after) = (previous.conditions.effective, next.conditions.effective)
            if before != after {
                // Asked in place rather than gathered into `asked`: a change of power can touch tens
                // of thousands of requests, and each insert would hash a key once more.
                for (group, keys) in keysByGroup where group.conditionBlockers(under: before) != group.conditionBlockers(under: after) {
                    for key in keys where !asked.contains(key) { ask(key, queue: false) }
                }
            }
            answer.formUnion(changed)
        }
        decideTurn(records: records, request: request, settings: settings, catalog: catalog, now: now, week: week, answer: &answer)
        if dates.count > 2 * max(known.count, 64) { rebuildDates(request: request) }
        return answer
    }

    /// The launch turn's word for the requests nothing of their own holds (coalescing, the launch
    /// limit), from a state holding them and the requests that may join their hold: every
    /// request held only by its date within the coalescing window after the latest of them is
    /// ready. The turn looks at no other request, so its word is the same as over all of them.
    private func decideTurn(records: StateSnapshot, request: (TaskKey) -> PendingRequest?, settings: SchedulerSettings,
                            catalog: ManifestCatalog, now: Date, week: (Identifier) -> [Double]?, answer: inout Set<TaskKey>) {
        let candidates = free.compactMap(request)
        guard let latest = candidates.map(\.readyDate).max() else { return }
        let windowEnd = latest.addingTimeInterval(settings.coalescingWindowSeconds)
        var subset = records
        subset.requests = candidates + dateOnly.compactMap { key, date in date <= windowEnd ? request(key) : nil }
        let turn = SchedulerState(reading: subset, settings: settings, catalog: catalog, now: now).launchTurn(at: now)
        for pending in candidates {
            let blockers = turn.blockers[pending.key] ?? []
            let wait = RequestWait(blockers: blockers, coalescingEnds: blockers.contains(.coalescing) ? turn.coalescingEnds : nil,
                                   usageWeek: pending.kind == .appRefresh ? week(pending.app) : nil)
            if waits[pending.key] != wait {
                waits[pending.key] = wait
                answer.insert(pending.key)
            }
        }
    }

    private func remember(_ request: PendingRequest, blockers: [Blocker], queue: Bool) {
        let key = request.key
        let group = RequestConditionGroup(request)
        if let old = known.updateValue(Known(blockers: blockers, group: group), forKey: key) {
            if old.group != group {
                keysByGroup[old.group]?.remove(key)
                keysByGroup[group, default: []].insert(key)
            }
        } else {
            keysByApp[key.app, default: []].insert(key)
            keysByGroup[group, default: []].insert(key)
        }
        if blockers.isEmpty { free.insert(key) } else { free.remove(key) }
        if blockers == [.earliestBeginDate], let date = request.earliestBeginDate { dateOnly[key] = date } else { dateOnly[key] = nil }
        if queue, blockers.contains(.earliestBeginDate), let date = request.earliestBeginDate { dates.insert(date, key) }
    }

    private func forget(_ key: TaskKey) {
        if let old = known.removeValue(forKey: key) { keysByGroup[old.group]?.remove(key) }
        keysByApp[key.app]?.remove(key)
        if keysByApp[key.app]?.isEmpty == true { keysByApp[key.app] = nil }
        free.remove(key)
        dateOnly[key] = nil
    }

    /// The queue keeps a date for each time a request was asked while its date held it; once
    /// most of them are stale, it is rebuilt from the requests still held by their dates.
    private func rebuildDates(request: (TaskKey) -> PendingRequest?) {
        dates = DateQueue()
        for (key, entry) in known where entry.blockers.contains(.earliestBeginDate) {
            if let date = request(key)?.earliestBeginDate { dates.insert(date, key) }
        }
    }
}
