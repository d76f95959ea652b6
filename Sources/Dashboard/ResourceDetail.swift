import FoundationEssentials
import TaskState

/// What a running task's launch has cost, for the detail view: the totals of its whole process
/// tree as the resource monitor last sampled them.
enum ResourceDetail {
    static func lines(_ resources: LaunchResources?, date: (Date?) -> String) -> [(String, String)] {
        guard let resources else { return [("resources", "no sample yet (taken while something runs, at most once a second)")] }
        let pids = resources.pids.map(String.init).joined(separator: " ")
        let more = resources.pids.count >= LaunchResources.maximumPids ? " …" : ""
        let source = resources.source == .cgroup ? "cgroup (the launch's own cgroup v2)" : "proc (summed from /proc over its processes)"
        var lines: [(String, String)] = []
        if resources.phase == .ending {
            lines += [("app", resources.app.rawValue), ("launch", resources.launchID),
                      ("phase", "ending: tasks done, the rest of its tree being ended")]
        }
        lines += [("cpu time", ResourceText.cpuTime(resources.cpuSeconds)),
                  ("cpu", resources.cpuPercent.map { ResourceText.percent($0) + "% of one core" } ?? "- (needs two samples)"),
                  ("memory", "\(ResourceText.memory(resources.memoryBytes)) now, \(ResourceText.memory(resources.peakMemoryBytes)) at most"),
                  ("pids counted", "\(resources.pids.count): \(pids)\(more)"), ("measured from", source),
                  ("sampled", date(resources.sampledAt))]
        return lines
    }
}
