import Dashboard
import Foundation
import TaskState

extension Fixtures {
    /// The busy screen with the resource monitor's sample: the mail refresh spinning a core, the
    /// photos processing in its own cgroup, the chat finishing task sampled once (no CPU% yet),
    /// the backup not sampled yet, and a news launch whose tasks are done being ended.
    static let withResources: DashboardSnapshot = {
        var snapshot = busy
        snapshot.resources = ResourceReport(sampledAt: at(-0.4), launches: [
            LaunchResources(launchID: "launch-31337", app: id("com.example.mail"), pids: [31_337, 31_338], cpuSeconds: 4.62,
                            cpuPercent: 92.4, memoryBytes: 46_137_344, peakMemoryBytes: 52_428_800, source: .proc, sampledAt: at(-0.4)),
            LaunchResources(launchID: "launch-31200", app: id("com.example.photos"), pids: [31_200, 31_201, 31_207], cpuSeconds: 61.3,
                            cpuPercent: 12.5, memoryBytes: 325_058_560, peakMemoryBytes: 1_395_864_371, source: .cgroup, sampledAt: at(-0.4)),
            LaunchResources(launchID: "launch-30001", app: id("com.example.chat"), pids: [30_001], cpuSeconds: 0.08,
                            cpuPercent: nil, memoryBytes: 7_340_032, peakMemoryBytes: 7_340_032, source: .proc, sampledAt: at(-0.4)),
            LaunchResources(launchID: "com.example.news-1795348790000", app: id("com.example.news"), pids: [31_500, 31_502],
                            cpuSeconds: 1.9, cpuPercent: 3.1, memoryBytes: 2_411_724, peakMemoryBytes: 9_437_184, source: .proc,
                            phase: .ending, sampledAt: at(-0.4)),
        ])
        return snapshot
    }()
}
