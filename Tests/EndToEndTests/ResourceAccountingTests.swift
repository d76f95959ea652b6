import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The resource monitor, the CPU monitor and the leftover rule with the real scheduler: real bash
/// handlers that spin a core or leave children behind, real signals, `/proc` as the witness.
@Suite struct ResourceAccountingTests {
    /// A handler that spins a core until its expiration signal, then completes and exits (the
    /// spin is bounded, so nothing outlives a failed test for long).
    private static func spinner(_ identifier: String) -> String {
        """
        trap '"$BGCTL" complete \(identifier) --success; exit 0' USR1
        echo "pid $$" >> "$OUT"
        end=$((SECONDS+120)); while [ $SECONDS -lt $end ]; do :; done
        """
    }

    /// A monitor that judges fast: 10 % of a core over 2 s (a spinning handler uses far more,
    /// even on a machine shared with compilers).
    private static var quickMonitor: [String: Any] { ["cpuLimitPercent": 10, "cpuLimitWindowSeconds": 2, "expirationGraceSeconds": 3] }

    private func report(_ env: TestEnvironment) -> ResourceReport? {
        (try? StateFiles.read(env.paths.resources)).flatMap { try? JSONFormat.decode(ResourceReport.self, from: $0) }
    }

    /// Submits a request far in the future and simulates its launch; the handler's pid (it leads
    /// its process group) once it has started.
    private func simulateLaunch(_ env: TestEnvironment, app: String, identifier: String, kind: String) throws -> Int32? {
        #expect(try env.bgctl("submit", "--app", app, "--id", identifier, "--kind", kind, "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", identifier).status == 0)
        try env.waitUntil("the handler to start") { !env.output(of: app).isEmpty }
        return Int32(env.output(of: app)[0].dropFirst("pid ".count))
    }

    /// Ends the process group a test's handler leads, whatever happened to the test.
    private func endGroup(_ pid: Int32?) {
        if let pid, pid > 1 { kill(-pid, SIGKILL) }
    }

    @Test func aRefreshHandlerThatSpinsACoreIsExpiredWithCpuLimitAndItsCPUSecondsInTheEvent() throws {
        let env = try TestEnvironment()
        try env.writeSettings(Self.quickMonitor)
        let app = "com.example.spin", identifier = "com.example.spin.refresh"
        try env.addApp(app, identifiers: [identifier], script: Self.spinner(identifier))
        let daemon = try env.startDaemon()
        var leader: Int32?
        defer {
            endGroup(leader)
            daemon.stop()
        }
        leader = try simulateLaunch(env, app: app, identifier: identifier, kind: "refresh")

        try env.waitUntil("the CPU monitor's expiry", timeout: 60) { !env.events(.expired).isEmpty }
        let expired = try #require(env.events(.expired).first)
        #expect(expired.reason == "cpuLimit", "\(expired.message)")
        let seconds = try #require(expired.cpuSeconds)
        #expect(seconds > 0.2, "a spinning handler used CPU seconds of its own: \(seconds)")
        #expect(expired.peakMemoryBytes.map { $0 > 0 } == true)
        try env.waitUntil("the handler to complete on its signal", timeout: 30) { try env.tasks().isEmpty }
        let apps = try env.bgctl("apps", "--json")
        #expect(apps.stdout.contains("\"lastCpuLimitReason\" : \"cpuLimit"), "\(apps)")
        try env.waitUntil("resources.json to go once nothing runs", timeout: 30) { !StateFiles.exists(env.paths.resources) }
    }

    @Test func aProcessingHandlerOnExternalPowerMaySpin() throws {
        let env = try TestEnvironment()
        try env.writeSettings(Self.quickMonitor)
        let app = "com.example.crunch", identifier = "com.example.crunch.train"
        try env.addApp(app, identifiers: [identifier], script: Self.spinner(identifier))
        let daemon = try env.startDaemon()
        var leader: Int32?
        defer {
            endGroup(leader)
            daemon.stop()
        }
        #expect(try env.bgctl("conditions", "set", "power=ac").status == 0)
        leader = try simulateLaunch(env, app: app, identifier: identifier, kind: "processing")

        // Three CPU seconds measured: more than a whole 2 s window at 10 % would allow, many times.
        try env.waitUntil("three CPU seconds to be measured", timeout: 60) {
            (report(env)?.launches.first?.cpuSeconds ?? 0) >= 3
        }
        #expect(env.events(.expired).isEmpty, "processing on external power is exempt from the CPU monitor")
        let task = try #require(try env.tasks().first)
        #expect(task["state"] as? String == "running")
        #expect((task["cpuSeconds"] as? Double ?? 0) >= 3)
        #expect(try env.bgctl("simulate-expiration", identifier).status == 0)
        try env.waitUntil("the handler to complete on its signal", timeout: 30) { try env.tasks().isEmpty }
    }

    @Test(arguments: [true, false])
    func childrenLeftByAFinishedHandlerAreCountedThenEnded(cgroups: Bool) throws {
        let env = try TestEnvironment()
        try env.writeSettings(["launchCgroups": cgroups, "expirationGraceSeconds": 2])
        let app = "com.example.leaky", identifier = "com.example.leaky.refresh"
        let out = try env.addApp(app, identifiers: [identifier], script: """
        sleep 300 &
        echo "child $!" >> "$OUT"
        setsid sleep 300 &
        echo "setsid $!" >> "$OUT"
        while [ ! -e "$OUT.go" ]; do sleep 0.1; done
        "$BGCTL" complete \(identifier) --success
        exit 0
        """)
        let daemon = try env.startDaemon()
        var children: [Int32] = []
        defer {
            for pid in children where processIsAlive(pid) { kill(pid, SIGKILL) }
            _ = FileManager.default.createFile(atPath: out + ".go", contents: nil)
            daemon.stop()
        }
        #expect(try env.bgctl("submit", "--app", app, "--id", identifier, "--kind", "refresh", "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", identifier).status == 0)
        try env.waitUntil("both children") { env.output(of: app).count == 2 }
        children = env.output(of: app).compactMap { line in line.split(separator: " ").last.flatMap { Int32($0) } }
        #expect(children.count == 2)

        // Both are counted while the handler runs, the `setsid` one too.
        try env.waitUntil("both children in resources.json", timeout: 20) {
            guard let launch = report(env)?.launches.first else { return false }
            return children.allSatisfy(launch.pids.contains)
        }
        let launch = try #require(report(env)?.launches.first)
        #expect(launch.source == (cgroups && daemon.log.contains("resource accounting in cgroup") ? .cgroup : .proc), "\(daemon.log)")
        #expect(launch.phase == .running)
        #expect(launch.memoryBytes > 0)
        let task = try #require(try env.tasks().first)
        #expect(task["memoryBytes"] as? Int ?? 0 > 0)
        #expect(task["cpuSeconds"] is Double)
        let plain = try env.bgctl("list")
        #expect(plain.stdout.contains("CPU%") && plain.stdout.contains("MEM"), "\(plain)")

        _ = FileManager.default.createFile(atPath: out + ".go", contents: nil)
        try env.waitUntil("the leftovers to be ended", timeout: 30) { children.allSatisfy { !processIsAlive($0) } }
        let ended = try #require(env.events(.leftoverEnded).first)
        for child in children { #expect(ended.message.contains("\(child)"), "\(ended.message)") }
        #expect(ended.app?.rawValue == app)
        #expect(env.events(.completed).first?.cpuSeconds != nil)
        try env.waitUntil("resources.json to go once nothing runs", timeout: 30) { !StateFiles.exists(env.paths.resources) }
    }
}
