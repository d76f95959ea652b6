import Dashboard
import Foundation
import SchedulerCore
import TaskState

/// Reads the state directory into a dashboard snapshot. Read-only: the dashboard never writes
/// state, only commands.
struct SnapshotReader {
    let paths: StatePaths
    let configDirectory: String
    var eventLimit = 500

    /// Reads the whole state directory (for `--batch`, and the first screen).
    func read(now: Date = Date()) -> DashboardSnapshot {
        build(from: StateSnapshot.load(paths), now: now)
    }

    /// The dashboard snapshot for state already in memory (see ``StateMirror``).
    func build(from snapshot: StateSnapshot, now: Date = Date()) -> DashboardSnapshot {
        var problem: String?
        var info = stat()
        if lstat(paths.root, &info) != 0 {
            problem = errno == ENOENT ? "state directory \(paths.root) does not exist yet: start bgtaskd"
                                      : "cannot read \(paths.root): \(String(cString: strerror(errno)))"
            return DashboardSnapshot(now: now, stateDirectory: paths.root, problem: problem)
        }
        if access(paths.root, R_OK | X_OK) != 0 {
            return DashboardSnapshot(now: now, stateDirectory: paths.root,
                                     problem: "cannot read \(paths.root): \(String(cString: strerror(errno)))")
        }
        let settings = (try? SchedulerSettings.load(configDirectory: configDirectory)) ?? SchedulerSettings()
        let catalog = ManifestCatalog.load(from: "\(configDirectory)/apps")
        let conditions = snapshot.conditions ?? ConditionsRecord(probed: Conditions(), probedAt: now)
        let state = SchedulerState(settings: settings, catalog: catalog, snapshot: snapshot, conditions: conditions)
        let pending = snapshot.requests.map { request in
            DashboardSnapshot.PendingRow(request: request, blockers: state.blockers(for: request, at: now).map(\.rawValue))
        }
        let schedulerPID = StateLock.holder(paths)
        if let first = snapshot.unreadable.first {
            let more = snapshot.unreadable.count > 1 ? " and \(snapshot.unreadable.count - 1) more" : ""
            problem = "unreadable state file \(first.path)\(more): \(first.reason)"
        } else if schedulerPID == nil {
            problem = "bgtaskd is not running for \(paths.root): showing the last recorded state"
        }
        return DashboardSnapshot(
            now: now, stateDirectory: paths.root, schedulerPID: schedulerPID, heartbeat: snapshot.heartbeat,
            conditions: snapshot.conditions, pending: pending, tasks: snapshot.tasks, transfers: snapshot.transfers,
            events: EventLog(paths: paths).recent(limit: eventLimit).events, problem: problem)
    }
}
