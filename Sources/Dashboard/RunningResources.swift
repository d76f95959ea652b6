import FoundationEssentials
import TaskState

/// The resource monitor's sample arranged for the running panel: each launch's figures by launch
/// id, and the launches whose tasks have all finished while what is left of their process tree
/// is ended (`phase: ending`), which have no task row of their own and get one after the tasks.
struct RunningResources: Sendable {
    private(set) var byLaunch: [String: LaunchResources] = [:]
    private(set) var ending: [LaunchResources] = []

    init(_ report: ResourceReport?, tasks: [LaunchedTask]) {
        guard let report else { return }
        byLaunch = Dictionary(report.launches.map { ($0.launchID, $0) }, uniquingKeysWith: { first, _ in first })
        let withTasks = Set(tasks.map(\.launchID))
        ending = report.launches.filter { $0.phase == .ending && !withTasks.contains($0.launchID) }
            .sorted { ($0.app, $0.launchID) < ($1.app, $1.launchID) }
    }
}

extension DashboardSnapshot {
    /// The monitor's last sample of the launch that carries `task`, if it has one.
    public func resources(of task: LaunchedTask) -> LaunchResources? { launchResources.byLaunch[task.launchID] }

    /// Launches being ended after their tasks finished: rows of the running panel after the tasks.
    public var endingLaunches: [LaunchResources] { launchResources.ending }

    /// The task of a running panel row's source index; `nil` for an ending launch's row.
    func runningTask(_ source: Int) -> LaunchedTask? { tasks.indices.contains(source) ? tasks[source] : nil }

    /// The ending launch of a running panel row's source index (those come after the tasks).
    func endingLaunch(_ source: Int) -> LaunchResources? {
        let index = source - tasks.count
        return endingLaunches.indices.contains(index) ? endingLaunches[index] : nil
    }

    /// The app of a running panel row.
    func runningApp(_ source: Int) -> Identifier? { runningTask(source)?.app ?? endingLaunch(source)?.app }
}
