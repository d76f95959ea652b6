import FoundationEssentials
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
        rotateLog(of: plan.app, now: now)
        switch launcher.launch(plan) {
        case .success(let launched):
            if let problem = launched.logProblem {
                state.record(Event(time: now, type: .appLogProblem, app: plan.app, pid: launched.pid,
                                   message: "\(plan.app): \(problem); launch \(plan.launchID) runs on, its output may be lost"))
            }
            children.insert(launched.pid)
            handles.holdChild(launched.pid)
            monitor.place(launched.pid, launchID: plan.launchID)
            state.recordLaunch(plan, pid: launched.pid, processGroup: launched.pid, processStartTicks: launched.startTicks,
                               logOffset: launched.logOffset, now: now)
            logger.info("launched \(plan.app) pid \(launched.pid) for \(plan.requests.map(\.identifier.rawValue))")
            return .success(launched.pid)
        case .failure(let error):
            state.recordLaunchFailure(plan, reason: error.message, now: now)
            logger.error("\(error)")
            return .failure(error)
        }
    }

    /// Rotates the app's log when it has reached its cap and no process of the app could be
    /// writing to it (see ``AppLogRotation``).
    private func rotateLog(of app: Identifier, now: Date) {
        guard !state.processes.values.contains(where: { $0.app == app }) else { return }
        let outcome = AppLogRotation.rotate(paths.appLog(app), maximumBytes: state.settings.appLogMaximumBytes,
                                            kept: state.settings.appLogKeptFiles)
        if case .failed(let reason) = outcome {
            state.record(Event(time: now, type: .appLogProblem, app: app, message: "\(app): its log was not rotated: \(reason)"))
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

    /// Sends an expiration signal or a kill, through the pidfds of ``handles`` only: a pid the
    /// scheduler did not launch or vet is never signalled.
    func signal(_ effect: SchedulerEffect) {
        switch effect {
        case .notifyExpiration(let pid, let signal, _):
            guard handles.holds(pid) else {
                logger.warning("not signalling pid \(pid): not a process the scheduler launched or vetted")
                return
            }
            handles.signal(pid, SignalName.number(of: signal) ?? SIGUSR1)
        case .kill(let pid, let group, _):
            guard handles.holds(pid) else {
                logger.warning("not killing pid \(pid): not a process the scheduler launched or vetted")
                return
            }
            handles.kill(pid, group: group, isUnreapedChild: children.contains(pid))
        case .endLeftover(let launchID, let members, let signal):
            monitor.signal(members, launchID: launchID, signal: SignalName.number(of: signal) ?? SIGTERM)
        default:
            break
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
