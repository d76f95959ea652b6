import Foundation
import TaskState

extension SchedulerState {
    /// The next time anything changes by time alone, or `nil` when nothing waits for a time:
    /// the scheduler then sleeps until a file, a signal or a child wakes it.
    public func nextWake(after now: Date) -> Date? {
        nextWake(after: now, turn: launchTurn(at: now))
    }

    /// ``nextWake(after:)`` and ``isWaitingOnConditions(at:)`` from one look at every pending
    /// request: the runtime asks both at the end of every turn, and each look costs as much as
    /// there are requests.
    public func wakePlan(after now: Date) -> (nextWake: Date?, isWaitingOnConditions: Bool) {
        let turn = launchTurn(at: now)
        // A runnable request held for coalescing or by the launch limit has no blocker of its own.
        let own = { (request: PendingRequest) -> [Blocker] in
            let blockers = turn.blockers[request.key] ?? []
            return blockers == [.coalescing] || blockers == [.launchLimit] ? [] : blockers
        }
        return (nextWake(after: now, turn: turn), isWaitingOnConditions(at: now, blockersOf: own))
    }

    private func nextWake(after now: Date, turn: LaunchTurn) -> Date? {
        var candidates: [Date] = nextTaskDeadline(after: now).map { [$0] } ?? []
        // The turn's own blockers: a held or queued request has none that time alone clears.
        let coming = nextCoalescedTurn(turn, now: now)
        for request in requests.values {
            guard let ready = timedReadiness(of: request, blockers: turn.blockers[request.key] ?? [], at: now) else { continue }
            // While launches are held, whatever becomes ready before the hold ends is looked at
            // when it ends; the next group of dated requests, when its last one comes due: one
            // wake-up for the lot.
            if let ends = turn.coalescingEnds, ready <= ends { continue }
            if let coming, coming.requests.contains(request.key) { continue }
            candidates.append(ready)
        }
        if let look = turn.nextLook { candidates.append(look) }
        if let coming { candidates.append(coming.date) }
        if let transfer = nextTransferWake(after: now) { candidates.append(transfer) }
        if let session = nextSessionLaunchWake(after: now) { candidates.append(session) }
        if let push = nextPushWake(after: now) { candidates.append(push) }
        if let report = nextVoIPReportDeadline() { candidates.append(report) }
        return candidates.min()
    }

    /// The next budget or grace period to run out, for the runtime to act on the moment it does.
    public func nextTaskDeadline(after now: Date) -> Date? {
        tasks.values.lazy.map { task in
            switch task.state {
            case .running: task.deadline
            case .expiring: task.killDeadline ?? now
            }
        }.min()
    }

    /// Whether some request waits only on probed (not simulated) machine conditions, at least
    /// one of them read from the kernel's files, so the runtime should look at the machine again
    /// after a while. Conditions a desktop service announces wake the runtime themselves.
    public func isWaitingOnConditions(at now: Date) -> Bool {
        isWaitingOnConditions(at: now) { blockers(for: $0, at: now) }
    }

    private func isWaitingOnConditions(at now: Date, blockersOf: (PendingRequest) -> [Blocker]) -> Bool {
        let transferWaits = transfers.values.contains { record in
            guard record.state == .waiting else { return false }
            let blockers = transferBlockers(for: record, at: now)
            let probed = blockers.filter { ($0 == .network && !conditions.isSimulated(.network))
                || ($0 == .externalPower && !conditions.isSimulated(.power)) }
            // Only the files need a timer: a service announces its own changes.
            let fromFiles = probed.contains { ($0 == .network && conditions.isProbedFromFiles(.network))
                || ($0 == .externalPower && conditions.isProbedFromFiles(.power)) }
            return fromFiles && blockers.allSatisfy { probed.contains($0) || $0 == .earliestBeginDate || $0 == .retryBackoff || $0 == .relaunchDelay }
        }
        return transferWaits || isPushWaitingOnConditions(at: now) || requests.values.contains { request in
            let blockers = blockersOf(request)
            guard !blockers.isEmpty else { return false }
            return blockers.allSatisfy { blocker in
                if blocker.isTimed { return true }
                guard let name = blocker.condition else { return false }
                return !conditions.isSimulated(name)
            } && blockers.contains { $0.condition.map(conditions.isProbedFromFiles) ?? false }
        }
    }
}
