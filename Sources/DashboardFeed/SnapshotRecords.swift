import Dashboard
import FoundationEssentials
import SchedulerCore
import TaskState

extension DashboardSnapshot {
    /// Sets everything but the pending rows from `records` (a state directory's records) and the
    /// policy's `state` over them: the tasks, transfers and why they wait, the apps, the events,
    /// and the line about what is wrong, if anything.
    public mutating func fill(records: StateSnapshot, state: SchedulerState, events: [Event], history: RunHistory?,
                              catalog: ManifestCatalog, schedulerPID: Int32?, now: Date) {
        var transferBlockers: [TaskKey: [TransferBlocker]] = [:]
        for transfer in records.transfers where transfer.state == .waiting {
            let blockers = state.transferBlockers(for: transfer, at: now)
            if !blockers.isEmpty { transferBlockers[transfer.key] = blockers }
        }
        var problem: String?
        if let first = records.unreadable.first {
            let more = records.unreadable.count > 1 ? " and \(records.unreadable.count - 1) more" : ""
            problem = "unreadable state file \(first.path)\(more): \(first.reason)"
        } else if schedulerPID == nil {
            problem = "bgtaskd is not running for \(stateDirectory): showing the last recorded state"
        }
        self.now = now
        self.schedulerPID = schedulerPID
        heartbeat = records.heartbeat
        conditions = records.conditions
        tasks = records.tasks
        transfers = records.transfers
        self.transferBlockers = transferBlockers
        self.events = events
        apps = AppRows.build(state: state, records: records.apps, catalog: catalog, now: now)
        self.problem = problem
        resources = records.resources
        if let history { self.history = history }
    }
}
