import FoundationEssentials
import TaskState

extension SchedulerState {
    /// The next time anything changes by time alone, or `nil` when nothing waits for a time:
    /// the scheduler then sleeps until a file, a signal or a child wakes it.
    public func nextWake(after now: Date) -> Date? {
        nextWake(after: now, turn: dueTurn(at: now))
    }

    /// ``nextWake(after:)`` and ``isWaitingOnConditions(at:)`` together, as the runtime asks them
    /// at the end of every turn, from one launch turn.
    public func wakePlan(after now: Date) -> (nextWake: Date?, isWaitingOnConditions: Bool) {
        (nextWake(after: now, turn: dueTurn(at: now)), isWaitingOnConditions(at: now))
    }

    private func nextWake(after now: Date, turn: LaunchTurn) -> Date? {
        var candidates: [Date] = nextTaskDeadline(after: now).map { [$0] } ?? []
        // The turn's own blockers: a held or queued request has none that time alone clears.
        let coming = nextCoalescedTurn(turn, now: now)
        // Requests due by now that only time holds (a throttled app, a usage plan). Those the
        // turn did not look at wait for a condition, which no time clears. While launches are
        // held, whatever becomes ready before the hold ends is looked at when it ends.
        for (key, blockers) in turn.blockers {
            guard let request = requests[key], let ready = timedReadiness(of: request, blockers: blockers, at: now) else { continue }
            if let ends = turn.coalescingEnds, ready <= ends { continue }
            candidates.append(ready)
        }
        // Requests still to come, in date order: none is ready before its date, so each group's
        // walk ends at the first date past the earliest readiness found. It ends, too, at the
        // first date of the coming group: a request dated from then on is ready no sooner, and
        // one ready before the group's turn would only be held for it (one wake-up for the lot).
        // During a hold it is not walked: what it holds is ready at the hold's end or later.
        var earliest: Date?
        if turn.coalescingEnds == nil {
            forEachDatedRequest(after: now) { request, date in
                if let earliest, date >= earliest { return false }
                if let coming, date >= coming.first { return false }
                guard turn.blockers.index(forKey: request.key) == nil,
                      let ready = timedReadiness(of: request, blockers: blockers(for: request, at: now), at: now) else { return true }
                earliest = min(earliest ?? ready, ready)
                return true
            }
        }
        if let earliest { candidates.append(earliest) }
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
        isTransferWaitingOnConditions(at: now) || isPushWaitingOnConditions(at: now) || isRequestWaitingOnConditions(at: now)
    }

    /// The transfers' part of ``isWaitingOnConditions(at:)``: a waiting transfer held only by the
    /// network or power read from the files, and time. Only groups those conditions hold are
    /// looked into (``TransferSchedule``), and in each only until one such transfer is found.
    private func isTransferWaitingOnConditions(at now: Date) -> Bool {
        let effective = conditions.effective
        for (group, held) in transferSchedule.waiting {
            let holding = group.conditionBlockers(under: effective)
            guard holding.contains(.network) || holding.contains(.externalPower), !holding.contains(.expensiveNetwork) else { continue }
            var found = false
            held.forEach { entry in
                guard let record = transfers[entry.key] else { return true }
                found = waitsOnProbedConditions(record, at: now)
                return !found
            }
            if found { return true }
        }
        return false
    }

    private func waitsOnProbedConditions(_ record: TransferRecord, at now: Date) -> Bool {
        let blockers = transferBlockers(for: record, at: now)
        let probed = blockers.filter { ($0 == .network && !conditions.isSimulated(.network))
            || ($0 == .externalPower && !conditions.isSimulated(.power)) }
        // Only the files need a timer: a service announces its own changes.
        let fromFiles = probed.contains { ($0 == .network && conditions.isProbedFromFiles(.network))
            || ($0 == .externalPower && conditions.isProbedFromFiles(.power)) }
        return fromFiles && blockers.allSatisfy { probed.contains($0) || $0 == .earliestBeginDate || $0 == .retryBackoff || $0 == .relaunchDelay }
    }

    /// The requests' part of ``isWaitingOnConditions(at:)``. A request's conditions are its
    /// group's, so only groups held by probed conditions, one read from the files, are looked
    /// into, and in each only until one request is held by nothing but those and time.
    private func isRequestWaitingOnConditions(at now: Date) -> Bool {
        let effective = conditions.effective
        for (group, keys) in schedule.groups {
            let held = group.conditionBlockers(under: effective).compactMap(\.condition)
            guard !held.isEmpty, !held.contains(where: conditions.isSimulated), held.contains(where: conditions.isProbedFromFiles) else { continue }
            var found = false
            keys.forEach { entry in
                guard let request = requests[entry.key] else { return true }
                found = blockers(for: request, at: now).allSatisfy { blocker in
                    if blocker.isTimed { return true }
                    guard let name = blocker.condition else { return false }
                    return !conditions.isSimulated(name)
                }
                return !found
            }
            if found { return true }
        }
        return false
    }
}
