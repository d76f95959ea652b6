import FoundationEssentials
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The one way decisions leave the core: the daemon carries out ``SchedulerEffect`` values in
/// the order the core returned them, deciding nothing about them, only how and when. Expiration
/// signals and launches happen at once; kills and transfer attempts wait for the turn's commit
/// (``SchedulerDaemon/decideAndCommit(now:)``), so that what they announce is on disk first.
extension SchedulerDaemon {
    /// What a command's effects may need from the runtime: the process it named, as vetted.
    struct CommandContext {
        var process: VettedProcess?
        var issuedAt: Date
    }

    /// Carries out `effects`; returns the result of each launch among them, in order.
    @discardableResult
    func carryOut(_ effects: [SchedulerEffect], now: Date, command: CommandContext? = nil) -> [Result<Int32, SchedulerError>] {
        var launches: [Result<Int32, SchedulerError>] = []
        for effect in effects {
            switch effect {
            case .launch(let plan):
                launches.append(launch(plan, now: now))
            case .notifyExpiration(_, _, let keys):
                // The alarm may have signalled these tasks already; then it must not happen twice.
                guard alarm.claim(keys) else { continue }
                // Rewritten first (without a sync), so that the app woken by the signal reads its
                // task as expiring; the turn's commit makes it durable.
                for key in keys {
                    guard let task = state.tasks[key], let bytes = try? JSONFormat.encode(task) else { continue }
                    try? StateFiles.write(bytes, to: paths.task(key), durable: false)
                }
                signal(effect)
            case .kill, .endLeftover:
                processActions.append(effect)
            case .transfer(.discardDownload(let record)):
                // A file no record names: nothing to commit first.
                transferRunner.removeOrphanedDownload(of: record)
            case .transfer(let action):
                transferActions.append(action)
            case .superviseFinishing(let key, let pid):
                guard let process = command?.process else { continue }
                handles.hold(process)
                state.recordProcessIdentity(of: key, startTicks: process.startTicks)
                // Not our child: its exit is learnt through a pidfd, not SIGCHLD.
                if !children.contains(pid) { wait.watchExit(of: pid) }
            case .superviseAttachment(let app, _):
                guard let process = command?.process, let issuedAt = command?.issuedAt else { continue }
                noteAttachment(of: app, process: process, issuedAt: issuedAt, now: now)
            }
        }
        return launches
    }

    /// Expires tasks as of the moment ``ExpiryAlarm`` signalled them, then any other now due (a
    /// deadline that passed before the alarm had the task).
    func expireDueTasks(now: Date) {
        for fired in alarm.takeFired() {
            _ = state.expireRunning(at: fired.at, only: Set(fired.keys))
        }
        guard let due = state.nextTaskDeadline(after: now), due <= now else { return }
        carryOut(state.expire(at: now), now: now)
    }
}
