import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// How long the resource monitor follows a launch: not past its tasks when the leftover rule
/// leaves its process alone (zero idle cost), and across a scheduler restart without losing
/// what the launch already used.
@Suite struct AccountingLifetimeTests {
    static let app = "com.example.chat"
    static let refresh = "com.example.chat.refresh"

    private func report(_ env: TestEnvironment) -> ResourceReport? {
        (try? StateFiles.read(env.paths.resources)).flatMap { try? JSONFormat.decode(ResourceReport.self, from: $0) }
    }

    @Test func aPersonsProcessThatOutlivesItsFinishingTaskIsNoLongerSampled() throws {
        let env = try TestEnvironment()
        // Budgets no loaded machine runs out of: what is measured is the monitor, not the expiry.
        try env.writeSettings(["appRefreshBudgetSeconds": 600, "finishingBudgetSeconds": 600])
        // The manifest's executable is the very file the person's process runs, so the
        // scheduler may name it in begin-finishing.
        try env.writeJSON(["id": Self.app, "executable": "/bin/sleep", "arguments": ["300"],
                           "permittedIdentifiers": [Self.refresh], "backgroundModes": ["fetch"]],
                          to: "\(env.config)/apps/\(Self.app).json")
        let daemon = try env.startDaemon()
        let person = try Spawn.start("/bin/sleep", ["300"], environment: [:], stdout: "/dev/null", stderr: "/dev/null")
        defer {
            kill(person, SIGKILL)
            _ = Spawn.wait(person)
            daemon.stop()
        }
        let finishing = try env.bgctl("begin-finishing", "--app", Self.app, "--pid", "\(person)")
        #expect(finishing.status == 0, "\(finishing)")
        try env.waitUntil("the finishing task's launch in resources.json") {
            report(env)?.launches.contains { $0.pids.contains(person) } == true
        }
        #expect(report(env)?.launches.first?.phase == .running)

        #expect(try env.bgctl("complete", "finishing-1", "--app", Self.app, "--success").status == 0)
        try env.waitUntil("the finishing task to end") { try env.tasks().isEmpty }
        try env.waitUntil("resources.json to go while the person's process lives on", timeout: 15) {
            !StateFiles.exists(env.paths.resources)
        }
        // No longer sampled: a sample would write the file again within a second.
        usleep(3_000_000)
        #expect(!StateFiles.exists(env.paths.resources), "\(report(env).map { "\($0.launches)" } ?? "")")
        #expect(processIsAlive(person), "a person's process is never ended as leftover")
        #expect(env.events(.leftoverEnded).isEmpty)
        #expect(daemon.isRunning)
    }

    @Test func anAppTheSchedulerLaunchedThatStaysAttachedIsNoLongerSampledOnceItsTaskEnds() async throws {
        let env = try TestEnvironment()
        // Budgets no loaded machine runs out of: what is measured is the monitor, not the expiry.
        try env.writeSettings(["appRefreshBudgetSeconds": 600, "finishingBudgetSeconds": 600])
        let out = try env.addApp(Self.app, identifiers: [Self.refresh], script: """
        echo "pid $$" >> "$OUT"
        while [ ! -e "$OUT.go" ]; do sleep 0.1; done
        "$BGCTL" complete \(Self.refresh) --success
        sleep 300 & wait $!
        """)
        let daemon = try env.startDaemon()
        var leader: Int32?
        defer {
            if let leader, leader > 1 { kill(-leader, SIGKILL) }
            _ = FileManager.default.createFile(atPath: out + ".go", contents: nil)
            daemon.stop()
        }
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", Self.refresh, "--kind", "refresh", "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", Self.refresh).status == 0)
        try await env.eventually("the handler to start") { !env.output(of: Self.app).isEmpty }
        let pid = try #require(Int32(env.output(of: Self.app)[0].dropFirst("pid ".count)))
        leader = pid
        // The app attaches, as a library app waiting for its next task does.
        let id = Command.newID()
        let command = """
            {"id":"\(id)","issuedAt":"\(JSONFormat.string(from: Date()))","type":"attach","app":"\(Self.app)",\
            "pid":\(pid),"identifiers":["\(Self.refresh)"]}
            """
        let temporary = "\(env.state)/inbox/tmp/\(id).json"
        try FileManager.default.createDirectory(atPath: "\(env.state)/inbox/tmp", withIntermediateDirectories: true)
        try Data(command.utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, "\(env.paths.inboxNew)/\(id).json") == 0)
        try await env.eventually("the attach outcome") { StateFiles.exists(env.paths.outcome(id)) }
        #expect(try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id))).error == nil)
        // Generous: under a full parallel test run the first samples can be seconds apart.
        do {
            try await env.eventually("the launch in resources.json", timeout: 30) { report(env)?.launches.contains { $0.pids.contains(pid) } == true }
        } catch {
            Issue.record("\(error); last report: \(report(env).map { "\($0.launches)" } ?? "none"); tasks: \((try? env.tasks()) ?? [])")
            throw error
        }

        _ = FileManager.default.createFile(atPath: out + ".go", contents: nil)
        try await env.eventually("the refresh to complete") { try env.tasks().isEmpty }
        var phases: Set<LaunchResources.Phase> = []
        defer { #expect(!phases.contains(.ending), "an attached app is never shown as being ended") }
        try await env.eventually("resources.json to go while the attached app waits", timeout: 15) {
            phases.formUnion(report(env)?.launches.map(\.phase) ?? [])
            return !StateFiles.exists(env.paths.resources)
        }
        usleep(3_000_000)
        #expect(!StateFiles.exists(env.paths.resources), "no longer sampled: \(report(env).map { "\($0.launches)" } ?? "")")
        #expect(processIsAlive(pid), "the attached process waits for its next task")
        #expect(env.events(.leftoverEnded).isEmpty)
    }

    @Test func aLaunchKeepsCountingItsCPUSecondsAcrossASchedulerRestart() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["launchCgroups": true, "cpuLimitPercent": 0, "appRefreshBudgetSeconds": 600])
        let app = "com.example.spin", identifier = "com.example.spin.refresh"
        try env.addApp(app, identifiers: [identifier], script: """
        trap '"$BGCTL" complete \(identifier) --success; exit 0' USR1
        echo "pid $$" >> "$OUT"
        end=$((SECONDS+120)); while [ $SECONDS -lt $end ]; do :; done
        """)
        var daemon = try env.startDaemon()
        var leader: Int32?
        defer {
            if let leader, leader > 1 { kill(-leader, SIGKILL) }
            daemon.stop()
        }
        #expect(try env.bgctl("submit", "--app", app, "--id", identifier, "--kind", "refresh", "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", identifier).status == 0)
        try env.waitUntil("the handler to start") { !env.output(of: app).isEmpty }
        leader = Int32(env.output(of: app)[0].dropFirst("pid ".count))
        try env.waitUntil("two CPU seconds to be measured", timeout: 60) { (report(env)?.launches.first?.cpuSeconds ?? 0) >= 2 }
        let before = try #require(report(env)?.launches.first)
        let cgroups = daemon.log.contains("resource accounting in cgroup")
        // `resource accounting in cgroup v2 <subtree>`: the first scheduler's, left by its crash.
        let firstSubtree = daemon.log.split(separator: "\n").first { $0.contains("resource accounting in cgroup v2 ") }
            .flatMap { $0.components(separatedBy: "resource accounting in cgroup v2 ").last }
            .map { $0.trimmingCharacters(in: .whitespaces) }

        daemon.crash()
        if cgroups {
            let subtree = try #require(firstSubtree, "\(daemon.log)")
            #expect(FileManager.default.fileExists(atPath: subtree), "a crash leaves the subtree (the handler is in it): \(subtree)")
        }
        let restartedAt = Date()
        daemon = try env.startDaemon()
        try env.waitUntil("the restarted scheduler's first sample", timeout: 30) {
            (report(env)?.sampledAt ?? .distantPast) > restartedAt && report(env)?.launches.isEmpty == false
        }
        let after = try #require(report(env)?.launches.first)
        #expect(after.launchID == before.launchID)
        #expect(after.source == (cgroups ? .cgroup : .proc), "\(daemon.log)")
        #expect(after.cpuSeconds >= before.cpuSeconds, "counted on from \(before.cpuSeconds) s, not from 0: \(after.cpuSeconds) s")

        #expect(try env.bgctl("simulate-expiration", identifier).status == 0)
        try env.waitUntil("the handler to complete on its signal", timeout: 30) { try env.tasks().isEmpty }
        try env.waitUntil("resources.json to go once nothing runs", timeout: 30) { !StateFiles.exists(env.paths.resources) }
        if cgroups {
            let subtree = try #require(firstSubtree, "\(daemon.log)")
            #expect(!FileManager.default.fileExists(atPath: subtree), "the crashed scheduler's subtree is removed once its launch ended")
        }
    }
}
