import Foundation
import TaskState

/// Phase 2: how late an app is running after its request came due.
///
/// Each of `launches` apps gets one app refresh request due `lead` seconds after submission (plus
/// a stagger), with coalescing off. The app is a bash script whose first line notes the time.
/// Latency is that time minus `earliestBeginDate` (what the app sees: timer, decision, commit-free
/// spawn, exec of bash), and the `launched` event's time minus `earliestBeginDate` (the
/// scheduler's view, taken just before it starts the process).
struct LaunchLatency {
    typealias Result = ObservedTimings

    var workspace: Workspace
    var scheduler: String
    var launches: Int
    var lead: Double
    var stagger: Double

    func run() throws -> Result {
        let out = try workspace.folder("launch-observed")
        let script = "\(workspace.root)/launch-app.sh"
        try workspace.writeScript(script, """
            #!/bin/bash
            \(DueRequests.stampCommand(folder: out, suffix: "start"))

            """)
        var requests = try DueRequests(prefix: "bench.launch", count: launches, executable: script)
        let session = try SchedulerSession(workspace: workspace, name: "launch", scheduler: scheduler,
                                           // Each launch's own latency, not the coalescing hold or the launch limit.
                                           settings: ["coalescingWindowSeconds": 0, "maxConcurrentLaunches": 1024], apps: requests.apps)
        defer { session.stop() }
        try requests.submit(to: session.paths, lead: lead, stagger: stagger)

        var started: [Identifier: Double] = [:]
        var launched: [Identifier: Event] = [:]
        try waitUntil("\(launches) apps to start", timeout: lead + Double(launches) * stagger + 30, interval: 0.02) {
            started = requests.observed(in: out, suffix: "start")
            launched = DueRequests.lastEvent(.launched, in: session)
            guard session.isRunning else { throw BenchError("bgtaskd stopped during the launches: \(session.log)") }
            return started.count == launches && launched.count == launches
        }
        var app: [Double] = []
        var daemon: [Double] = []
        for entry in requests.apps {
            guard let due = requests.due[entry.id]?.timeIntervalSince1970 else { continue }
            if let time = started[entry.id] { app.append(time - due) }
            if let event = launched[entry.id] { daemon.append(event.time.timeIntervalSince1970 - due) }
        }
        return Result(appObserved: Samples(app), daemonObserved: Samples(daemon), lateSubmits: requests.lateSubmits(session))
    }
}
