import TaskState

/// The timeline's lanes: one per app that has runs or throttles in the history, or something
/// pending, running or transferring now; sorted by name, so a lane keeps its place as runs come.
public enum TimelineLanes {
    public static func apps(_ snapshot: DashboardSnapshot) -> [Identifier] {
        var apps = Set(snapshot.history.lanes.keys)
        for row in snapshot.pending { apps.insert(row.request.app) }
        for task in snapshot.tasks { apps.insert(task.app) }
        for transfer in snapshot.transfers where transfer.state.isActive { apps.insert(transfer.app) }
        return apps.sorted { $0.rawValue < $1.rawValue }
    }
}
