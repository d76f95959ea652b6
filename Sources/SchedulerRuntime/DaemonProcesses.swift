import Foundation
import Logging
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The scheduler's side of app processes: starting or handing over a launch, learning who an
/// attached process is, carrying out signals and kills, and reaping exits.
extension SchedulerDaemon {
    func launch(_ plan: LaunchPlan, now: Date) -> Result<Int32, SchedulerError> {
        var plan = plan
        if let target = plan.handOver {
            // Only to a process the scheduler holds (vetted at attach, or adopted with its start time).
            if handles.holds(target.pid), ProcessLauncher.isAlive(pid: target.pid, startTicks: target.processStartTicks) {
                state.recordLaunch(plan, pid: target.pid, processGroup: target.processGroup,
                                   processStartTicks: target.processStartTicks, now: now)
                logger.info("handed \(plan.requests.map(\.identifier.rawValue)) to running \(plan.app) pid \(target.pid)")
                return .success(target.pid)
            }
            // Its exit is not reaped yet: start a process as if none were attached.
            state.releaseAttachment(of: plan.app, pid: target.pid, reason: "gone", now: now)
            plan.handOver = nil
        }
        switch launcher.launch(plan) {
        case .success(let launched):
            children.insert(launched.pid)
            handles.holdChild(launched.pid)
            state.recordLaunch(plan, pid: launched.pid, processGroup: launched.pid, processStartTicks: launched.startTicks, now: now)
            logger.info("launched \(plan.app) pid \(launched.pid) for \(plan.requests.map(\.identifier.rawValue))")
            return .success(launched.pid)
        case .failure(let error):
            state.recordLaunchFailure(plan, reason: error.message, now: now)
            logger.error("\(error)")
            return .failure(error)
        }
    }

    /// Learns who an attached (and vetted) process is, holds it and watches for its end; one that
    /// is already gone is released at once.
    func noteAttachment(of app: Identifier, process: VettedProcess, issuedAt: Date, now: Date) {
        let pid = process.pid
        guard let startTicks = process.startTicks, ProcessLauncher.isAlive(pid: pid, startTicks: startTicks) else {
            close(process.pidfd)
            state.releaseAttachment(of: app, pid: pid, reason: "not running", now: now)
            return
        }
        // A command applied late (the scheduler was down) may name a pid that is now another
        // process: one that started after the command was written is not the one that wrote it.
        if let started = ProcessLauncher.startDate(ticks: startTicks), started > issuedAt.addingTimeInterval(1.5) {
            close(process.pidfd)
            state.releaseAttachment(of: app, pid: pid, reason: "pid reused", now: now)
            return
        }
        handles.hold(process)
        state.recordAttachmentIdentity(of: app, pid: pid, startTicks: startTicks,
                                       processGroup: getpgid(pid) == pid ? pid : nil)
        if !children.contains(pid) { self.wait.watchExit(of: pid) }
    }

    /// Carries out the policy's signals and kills, through the pidfds of ``handles`` only: a pid
    /// the scheduler did not launch or vet is never signalled.
    func execute(_ actions: [ProcessAction]) {
        for action in actions {
            switch action {
            case .notifyExpiration(let pid, let signal, _):
                guard handles.holds(pid) else {
                    logger.warning("not signalling pid \(pid): not a process the scheduler launched or vetted")
                    continue
                }
                handles.signal(pid, SignalName.number(of: signal) ?? SIGUSR1)
            case .kill(let pid, let group, _):
                guard handles.holds(pid) else {
                    logger.warning("not killing pid \(pid): not a process the scheduler launched or vetted")
                    continue
                }
                handles.kill(pid, group: group, isUnreapedChild: children.contains(pid))
            }
        }
    }

    /// Expires the tasks whose budget has run out: those ``ExpiryAlarm`` already signalled, as of
    /// the moment it did, and any other now due (a `simulate-expiration`, a deadline that passed
    /// before the alarm had the task), signalled here at once. Kills of tasks past their grace
    /// wait for the commit.
    func expireDueTasks(now: Date) {
        for fired in alarm.takeFired() {
            _ = state.expireRunning(at: fired.at, only: Set(fired.keys))
        }
        guard let due = state.nextTaskDeadline(after: now), due <= now else { return }
        for action in state.expire(at: now) {
            guard case .notifyExpiration(_, _, let keys) = action else {
                processActions.append(action)
                continue
            }
            guard alarm.claim(keys) else { continue }
            // Rewritten first (without a sync), so that the app woken by the signal reads its
            // task as expiring; the turn's commit makes it durable.
            for key in keys {
                guard let task = state.tasks[key], let bytes = try? JSONFormat.encode(task) else { continue }
                try? StateFiles.write(bytes, to: paths.task(key), durable: false)
            }
            execute([action])
        }
    }

    /// After a restart: takes handles on the adopted tasks' and attachments' processes, each only
    /// while it is still the process recorded (same start time).
    func holdAdoptedProcesses() {
        for task in state.tasks.values { handles.holdAdopted(task.pid, startTicks: task.processStartTicks) }
        for entry in state.processes.values { handles.holdAdopted(entry.pid, startTicks: entry.processStartTicks) }
        for app in state.apps.values {
            if let attached = app.attachedProcess { handles.holdAdopted(attached.pid, startTicks: attached.processStartTicks) }
        }
    }

    /// Reaps every child that has ended; the policy hears of them after the inbox is applied.
    func reapChildren() -> [ProcessExit] {
        var exits: [ProcessExit] = []
        var status: Int32 = 0
        while true {
            let pid = waitpid(-1, &status, WNOHANG)
            if pid <= 0 { break }
            children.remove(pid)
            exits.append(ProcessExit(pid: pid, status: WaitStatus(status)))
        }
        return exits
    }
}
