import Foundation
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
    /// The launch decisions at `now` (see ``LaunchTurn``).
    public func launchTurn(at now: Date) -> LaunchTurn {
        var turn = LaunchTurn()
        // Every request gets an entry: sized once, not grown by rehashing at every turn.
        turn.blockers.reserveCapacity(requests.count)
        var byApp: [Identifier: [PendingRequest]] = [:]
        for (key, request) in requests {
            let blockers = blockers(for: request, at: now)
            turn.blockers[key] = blockers
            if blockers.isEmpty, catalog.manifests.index(forKey: request.app) != nil {
                byApp[request.app, default: []].append(request)
            }
        }
        let candidates = byApp.map { app, runnable in (app, runnable.sorted(by: Self.launchOrder)) }
            .sorted { ($0.1[0].readyDate, $0.0) < ($1.1[0].readyDate, $1.0) }
        guard let earliestReady = candidates.first?.1.first?.readyDate else { return turn }

        let members = comingDue(within: earliestReady.addingTimeInterval(settings.coalescingWindowSeconds),
                                blockers: turn.blockers, now: now)
        if let last = members.max() {
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
    /// only for their dates, and those requests. The first of them to come due would be held for
    /// the others within the window, so the scheduler need not wake before the last of them.
    func nextCoalescedTurn(_ turn: LaunchTurn, now: Date) -> (date: Date, requests: Set<TaskKey>)? {
        guard turn.plans.isEmpty, turn.coalescingEnds == nil,
              !turn.blockers.values.contains(where: { $0 == [.launchLimit] }) else { return nil }
        var dated: [(key: TaskKey, date: Date)] = []
        for request in requests.values {
            guard turn.blockers[request.key] == [.earliestBeginDate], let date = request.earliestBeginDate,
                  catalog.manifests[request.app] != nil, blockers(for: request, at: date).isEmpty else { continue }
            dated.append((request.key, date))
        }
        guard let first = dated.map(\.date).min() else { return nil }
        let group = dated.filter { $0.date <= first.addingTimeInterval(settings.coalescingWindowSeconds) }
        guard let last = group.map(\.date).max() else { return nil }
        return (last, Set(group.map(\.key)))
    }

    /// The dates of requests, of any app, that wait only for an `earliestBeginDate` at or before
    /// `windowEnd` and will be runnable then. Empty once `now` reaches the window's end.
    private func comingDue(within windowEnd: Date, blockers: [TaskKey: [Blocker]], now: Date) -> [Date] {
        guard now < windowEnd else { return [] }
        return requests.values.compactMap { request -> Date? in
            guard blockers[request.key] == [.earliestBeginDate], let date = request.earliestBeginDate,
                  date <= windowEnd, catalog.manifests[request.app] != nil else { return nil }
            // Waiting for a request that will be held by something else at its date buys nothing.
            return self.blockers(for: request, at: date).isEmpty ? date : nil
        }
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
