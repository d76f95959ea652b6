import FoundationEssentials
import TaskState

/// What the policy decides for every pending request at one moment: which launches go out, and
/// why each request that does not launch waits.
///
/// Launches are coalesced across apps, as Apple's background fetch does ("these opportunities can
/// be coalesced across applications"): a launch that is about to happen waits at most
/// `coalescingWindowSeconds` after the earliest of them became ready, for requests of any app that
/// come due within that window and wait for nothing else, and they all go out in one turn, one
/// wake-up. At most `maxConcurrentLaunches` launched processes run at once; the rest of a burst
/// waits (blocker `launchLimit`) and starts as earlier launches end. Simulated launches, pushes and
/// background sessions' events are neither held nor counted against the limit when they start.
public struct LaunchTurn: Sendable, Equatable {
    /// Why each pending request does not launch in this turn; empty for those that do.
    public var blockers: [TaskKey: [Blocker]] = [:]
    /// The launches to start now, one per app.
    public var plans: [LaunchPlan] = []
    /// While launches are held for requests about to come due: when the last of those comes due,
    /// the time the hold ends (never later than the window after the earliest held launch was ready).
    public var coalescingEnds: Date?
    /// When the hold must be looked at again: its end.
    public var nextLook: Date?
}

extension SchedulerState {
    /// The launch decisions at `now` (see ``LaunchTurn``), with the blockers of every pending
    /// request: what `bgctl list` and `bgtop` show.
    public func launchTurn(at now: Date) -> LaunchTurn {
        var turn = LaunchTurn()
        // Every request gets an entry: sized once, not grown by rehashing.
        turn.blockers.reserveCapacity(requests.count)
        var byApp: [Identifier: [PendingRequest]] = [:]
        for request in requests.values { look(at: request, now: now, into: &turn, byApp: &byApp) }
        return decide(turn, byApp: byApp, now: now)
    }

    /// The same decisions as ``launchTurn(at:)``, from the requests that can matter now: those due
    /// by `now` in condition groups the conditions let run (``RequestSchedule``). The runtime's
    /// turn; ``LaunchTurn/blockers`` holds only the requests looked at.
    func dueTurn(at now: Date) -> LaunchTurn {
        var turn = LaunchTurn()
        var byApp: [Identifier: [PendingRequest]] = [:]
        for keys in runnableGroups {
            keys.forEach { entry in
                guard entry.date <= now else { return false }
                if let request = requests[entry.key] { look(at: request, now: now, into: &turn, byApp: &byApp) }
                return true
            }
        }
        return decide(turn, byApp: byApp, now: now)
    }

    private func look(at request: PendingRequest, now: Date, into turn: inout LaunchTurn,
                      byApp: inout [Identifier: [PendingRequest]]) {
        let blockers = blockers(for: request, at: now)
        turn.blockers[request.key] = blockers
        if blockers.isEmpty, catalog.manifests.index(forKey: request.app) != nil {
            byApp[request.app, default: []].append(request)
        }
    }

    /// Coalescing, the launch limit and hand-overs, over the runnable requests of each app.
    private func decide(_ turn: LaunchTurn, byApp: [Identifier: [PendingRequest]], now: Date) -> LaunchTurn {
        var turn = turn
        let candidates = byApp.map { app, runnable in (app, runnable.sorted(by: Self.launchOrder)) }
            .sorted { ($0.1[0].readyDate, $0.0) < ($1.1[0].readyDate, $1.0) }
        guard let earliestReady = candidates.first?.1.first?.readyDate else { return turn }

        if let last = lastComingDue(within: earliestReady.addingTimeInterval(settings.coalescingWindowSeconds), now: now) {
            turn.coalescingEnds = last
            // One wake-up at the end of the hold, not one per member: a command or a condition
            // that changes the picture meanwhile runs a turn anyway.
            turn.nextLook = last
            for (_, runnable) in candidates {
                for request in runnable { turn.blockers[request.key] = [.coalescing] }
            }
            return turn
        }

        var slots = max(0, settings.maxConcurrentLaunches - runningLaunchCount)
        for (appID, runnable) in candidates {
            guard let manifest = catalog.manifests[appID], let first = runnable.first else { continue }
            let handOver = handOverTarget(app: appID, identifiers: runnable.map(\.identifier))
            // A hand-over starts no process, so it takes no slot.
            if handOver == nil {
                guard slots > 0 else {
                    for request in runnable { turn.blockers[request.key] = [.launchLimit] }
                    continue
                }
                slots -= 1
            }
            turn.plans.append(LaunchPlan(
                launchID: "\(appID)-\(SafeNumber.int64(now.timeIntervalSince1970 * 1000, .down))", app: appID, manifest: manifest,
                requests: runnable, reason: first.kind.rawValue, simulated: false, handOver: handOver))
        }
        turn.plans.sort { $0.app < $1.app }
        return turn
    }

    /// When nothing is runnable yet: the turn that will launch the next group of requests waiting
    /// only for their dates, as the date of the first of them and the date of the turn (the last
    /// of them). The first to come due would be held for the others within the window, so the
    /// scheduler need not wake before the last of them.
    func nextCoalescedTurn(_ turn: LaunchTurn, now: Date) -> (first: Date, date: Date)? {
        guard turn.plans.isEmpty, turn.coalescingEnds == nil,
              !turn.blockers.values.contains(where: { $0 == [.launchLimit] }) else { return nil }
        // The first such date: in each group, the first request that qualifies, and no further
        // than the earliest found so far.
        var first: Date?
        forEachDatedRequest(after: now) { request, date in
            if let first, date >= first { return false }
            guard joinsNextTurn(request, at: date, now: now) else { return true }
            first = date
            return false
        }
        guard let first else { return nil }
        // `first` joins and is in the window, so the walk finds it or a later one.
        return (first, lastJoining(through: first.addingTimeInterval(settings.coalescingWindowSeconds), after: now) ?? first)
    }

    /// The last date, after `now` and at or before `windowEnd`, of a request of any app that waits
    /// only for that date and will be runnable then: the end of a hold. `nil` once `now` reaches
    /// the window's end.
    private func lastComingDue(within windowEnd: Date, now: Date) -> Date? {
        guard now < windowEnd else { return nil }
        return lastJoining(through: windowEnd, after: now)
    }

    /// The latest date in `(now, windowEnd]` of a request that joins the next turn. Each group is
    /// walked from the window's end and only down to the first that joins (or the latest found so
    /// far), so a window holding thousands of requests costs a look at a few of them, not all.
    private func lastJoining(through windowEnd: Date, after now: Date) -> Date? {
        var last: Date?
        for keys in runnableGroups {
            keys.forEachBackward(through: windowEnd) { entry in
                guard entry.date > now, last.map({ entry.date > $0 }) ?? true else { return false }
                guard let request = requests[entry.key], joinsNextTurn(request, at: entry.date, now: now) else { return true }
                last = entry.date
                return false
            }
        }
        return last
    }

    /// Whether `request` waits only for its date, `date`, and will be runnable then: waiting for a
    /// request that something else will hold at its date buys nothing.
    private func joinsNextTurn(_ request: PendingRequest, at date: Date, now: Date) -> Bool {
        blockers(for: request, at: now) == [.earliestBeginDate] && catalog.manifests.index(forKey: request.app) != nil
            && blockers(for: request, at: date).isEmpty
    }

    /// Calls `body` with the requests dated after `now` in the condition groups the conditions let
    /// run (the others wait for a condition, not a date), each group in date order, until `body`
    /// returns `false` for that group.
    func forEachDatedRequest(after now: Date, _ body: (PendingRequest, Date) -> Bool) {
        for keys in runnableGroups {
            keys.forEach(after: now) { entry in
                guard let request = requests[entry.key] else { return true }
                return body(request, entry.date)
            }
        }
    }

    /// The requests of each condition group the conditions let run, in date order; the other
    /// groups wait for a condition, whatever the time.
    private var runnableGroups: some Sequence<DateOrderedKeys> {
        let effective = conditions.effective
        return schedule.groups.lazy.filter { $0.key.conditionBlockers(under: effective).isEmpty }.map(\.value)
    }

    /// Processes the scheduler started whose tasks still run: a task counts when the ledger has its
    /// process under its own launch ID (a task handed over to a running process takes no slot, and
    /// one process counts once, however many launches it took over).
    var runningLaunchCount: Int {
        Set(tasks.values.lazy.filter { task in
            guard let entry = self.processes[task.pid] else { return false }
            return entry.launchID == task.launchID && entry.killDecidedAt == nil
        }.map(\.pid)).count
    }
}
