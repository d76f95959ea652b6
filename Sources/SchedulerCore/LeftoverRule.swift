import FoundationEssentials
import TaskState

/// No background work without a task: once every task of a launch the scheduler started is
/// finished, what is left of its process tree is ended (SIGTERM, then SIGKILL after
/// `expirationGraceSeconds`), with a `leftoverEnded` event naming the pids. The launch's first
/// process, still running, gets the grace to exit on its own first; the app's attached process
/// (it waits for more tasks) is left alone, and so is every process the scheduler did not start.
/// See `docs/scheduling.md#no-background-work-without-a-task`.
extension SchedulerState {
    /// Decides, from the samples, which launches' leftovers to end now and which to kill.
    mutating func endLeftovers(_ samples: [ResourceSample], now: Date) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        let grace = settings.expirationGraceSeconds
        for sample in samples where sample.startedByScheduler && !sample.members.isEmpty {
            let id = sample.launchID
            if tasks.values.contains(where: { $0.launchID == id }) {
                accounting.idleSince[id] = nil
                continue
            }
            if var ending = accounting.endings[id] {
                let known = Set(ending.members.map(\.pid))
                let newcomers = sample.members.filter { !known.contains($0.pid) }
                if !newcomers.isEmpty {
                    ending.members = (ending.members + newcomers).sorted()
                    changes.processes = true
                }
                if ending.killedAt == nil, now >= ending.killAt {
                    ending.killedAt = now
                    changes.processes = true
                    record(Event(time: now, type: .leftoverEnded, app: ending.app, pid: sample.members.first?.pid, reason: "SIGKILL",
                                 message: "\(ending.app): killed what was left of launch \(id) after the grace: \(Self.pidList(sample.members))"))
                    effects.append(.endLeftover(launchID: id, members: sample.members, signal: "SIGKILL"))
                } else if !newcomers.isEmpty, ending.killedAt == nil {
                    effects.append(.endLeftover(launchID: id, members: newcomers, signal: "SIGTERM"))
                } else if !newcomers.isEmpty {
                    effects.append(.endLeftover(launchID: id, members: newcomers, signal: "SIGKILL"))
                }
                accounting.endings[id] = ending
                continue
            }
            if let leader = sample.leader, apps[sample.app]?.attachedProcess?.pid == leader { continue }
            // A process that carries a task of another launch (one handed to it, a finishing task
            // it began) is not leftover while it has tasks.
            let memberPIDs = Set(sample.members.map(\.pid))
            if tasks.values.contains(where: { memberPIDs.contains($0.pid) }) { continue }
            if let leader = sample.leader, sample.members.contains(where: { $0.pid == leader }) {
                let since = accounting.idleSince[id] ?? now
                accounting.idleSince[id] = since
                if now < since.addingTimeInterval(grace) { continue }
            }
            accounting.idleSince[id] = nil
            let ending = LeftoverEnding(launchID: id, app: sample.app, members: sample.members.sorted(), decidedAt: now,
                                        killAt: now.addingTimeInterval(grace))
            accounting.endings[id] = ending
            changes.processes = true
            record(Event(time: now, type: .leftoverEnded, app: sample.app, pid: ending.members.first?.pid, reason: "SIGTERM",
                         message: "\(sample.app): its tasks are finished; ending what is left of launch \(id): \(Self.pidList(ending.members)) sent SIGTERM, SIGKILL in \(Self.seconds(grace))"))
            effects.append(.endLeftover(launchID: id, members: ending.members, signal: "SIGTERM"))
        }
        return effects
    }

    /// After a restart: the endings the last scheduler committed are carried on. What is left
    /// of them is killed at once (their SIGTERM went out, or was decided, before the restart).
    public mutating func resumeLeftoverEndings(now: Date) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        for (id, var ending) in accounting.endings.sorted(by: { $0.key < $1.key }) where ending.killedAt == nil {
            ending.killedAt = now
            accounting.endings[id] = ending
            changes.processes = true
            record(Event(time: now, type: .leftoverEnded, app: ending.app, pid: ending.members.first?.pid, reason: "SIGKILL",
                         message: "\(ending.app): killed what was left of launch \(id) after a scheduler restart: \(Self.pidList(ending.members))"))
            effects.append(.endLeftover(launchID: id, members: ending.members, signal: "SIGKILL"))
        }
        return effects
    }

    /// Loads the endings kept in `processes.json`.
    mutating func loadEndings(_ endings: [LeftoverEnding]?) {
        for ending in endings ?? [] { accounting.endings[ending.launchID] = ending }
    }

    static func pidList(_ members: [LeftoverEnding.Member]) -> String {
        let pids = members.map { String($0.pid) }
        return (pids.count == 1 ? "pid " : "pids ") + pids.joined(separator: ", ")
    }
}
