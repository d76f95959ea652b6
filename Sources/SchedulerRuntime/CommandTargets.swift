import FoundationEssentials
import SchedulerCore
import TaskState

/// The scheduler's check of the pid an `attach` or `begin-finishing` command names, before the
/// policy applies it: the policy then only ever sees pids the scheduler may signal.
extension SchedulerDaemon {
    /// The vetting of the command's pid, or nil when the command names no process to signal, or
    /// when the policy refuses it anyway (an unknown app, a pid out of range) and should say so.
    func vetTarget(of command: Command, now: Date) -> Result<VettedProcess, ProcessRefusal>? {
        let app: Identifier
        let pid: Int32
        switch command.action {
        case .attach(let attaching, let attachingPID, _, _, _): (app, pid) = (attaching, attachingPID)
        case .beginFinishing(let finishing, _, let finishingPID): (app, pid) = (finishing, finishingPID)
        default: return nil
        }
        guard command.outOfBounds(now: now) == nil, let manifest = state.catalog.manifests[app] else { return nil }
        return ProcessVetting.vet(pid: pid, appExecutable: manifest.executable) { pid, startTicks in
            isLaunchedByScheduler(pid, startTicks: startTicks)
        }
    }

    /// Whether `pid` is a process this scheduler started: its child, or the process of a task it
    /// launched (adopted after a restart), recognised by its start time.
    func isLaunchedByScheduler(_ pid: Int32, startTicks: UInt64?) -> Bool {
        if children.contains(pid) { return true }
        guard let startTicks else { return false }
        return state.tasks.values.contains {
            $0.pid == pid && $0.kind != .finishing && $0.processStartTicks == startTicks && handles.holds(pid)
        }
    }
}
