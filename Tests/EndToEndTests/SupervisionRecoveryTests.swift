import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// After `kill -9` of the scheduler: a command acknowledged as queued takes effect as if the
/// scheduler had been up, and every process it started is adopted or ended, never left running
/// unsupervised.
@Suite struct SupervisionRecoveryTests {
    /// Waits for `pid` to end and for its exit to be seen (a killed test app may stay a zombie).
    private func ended(_ pid: Int32) -> Bool { !processIsAlive(pid) }

    @Test func aCompletionQueuedWhileTheSchedulerWasDownCountsAfterTheRestart() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.finisher", identifiers: ["com.example.finisher.work"], script: """
        echo "started $$" >> "$OUT"
        while [ ! -e "$OUT.go" ]; do sleep 0.05; done
        "$BGCTL" complete com.example.finisher.work --success >> "$OUT" 2>&1
        echo "done" >> "$OUT"
        """)
        let first = try env.startDaemon()
        let pid = try launch("com.example.finisher", in: env)
        try env.waitUntil("the launch to be recorded") { try env.tasks().count == 1 }
        first.crash()

        // The app completes while no scheduler runs: bgctl queues the command, and the app exits.
        _ = FileManager.default.createFile(atPath: "\(env.root)/com.example.finisher.out.go", contents: nil)
        try env.waitUntil("the app to finish") { env.output(of: "com.example.finisher").contains("done") }
        try env.waitUntil("the app to exit") { ended(pid) }
        #expect(env.output(of: "com.example.finisher").contains { $0.contains("queued") },
                "\(env.output(of: "com.example.finisher"))")

        let second = try env.startDaemon()
        defer { second.stop() }
        try env.waitUntil("the completion to be applied") { !env.events(.completed).isEmpty }
        #expect(env.events(.completed).map(\.identifier?.rawValue) == ["com.example.finisher.work"])
        #expect(env.events(.interrupted).isEmpty, "\(env.events().map(\.message))")
        #expect(try env.tasks().isEmpty)
    }

    @Test func aCompletionQueuedInTheGracePeriodCountsEvenIfTheRestartComesAfterIt() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["expirationGraceSeconds": 1])
        try env.addApp("com.example.graceful", identifiers: ["com.example.graceful.work"], script: """
        echo "started $$" >> "$OUT"
        trap 'echo expired >> "$OUT"' USR1
        while [ ! -e "$OUT.go" ]; do sleep 0.05; done
        "$BGCTL" complete com.example.graceful.work --failure >> "$OUT" 2>&1
        echo "done" >> "$OUT"
        sleep 60 & wait $!
        """)
        let first = try env.startDaemon()
        let pid = try launch("com.example.graceful", in: env)
        defer { kill(-pid, SIGKILL) }
        #expect(try env.bgctl("simulate-expiration", "com.example.graceful.work").status == 0)
        try env.waitUntil("the app to hear of its expiry") { env.output(of: "com.example.graceful").contains("expired") }
        try env.waitUntil("the last commit") { env.journalHoldsNoRecord }
        first.crash()

        // Within its grace the app completes (queued: no scheduler), and lives on; the restart
        // comes after the grace period has ended.
        _ = FileManager.default.createFile(atPath: "\(env.root)/com.example.graceful.out.go", contents: nil)
        try env.waitUntil("the app to complete") { env.output(of: "com.example.graceful").contains("done") }
        Thread.sleep(forTimeInterval: 1.5)

        let second = try env.startDaemon()
        defer { second.stop() }
        try env.waitUntil("the completion to be applied") { !env.events(.completed).isEmpty }
        #expect(env.events(.completed).first?.identifier?.rawValue == "com.example.graceful.work")
        #expect(env.events(.killed).isEmpty, "\(env.events().map(\.message))")
        #expect(processIsAlive(pid), "a process that completed in its grace period is not killed")
    }

    @Test func aKillCommittedButNeverSentIsCarriedOutAtTheRestart() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.stubborn", identifiers: ["com.example.stubborn.work"], script: """
        echo "started $$" >> "$OUT"
        trap 'echo ignoring >> "$OUT"' USR1
        sleep 60 &
        while true; do wait; done
        """)
        let first = try env.startDaemon()
        let pid = try launch("com.example.stubborn", in: env)
        try env.waitUntil("the launch to be recorded in the process ledger") {
            (try? ledger(env))?.processes.map(\.pid) == [pid]
        }
        // The commit is over (else its journal would be replayed over the files edited below).
        try env.waitUntil("the last commit") { env.journalHoldsNoRecord }
        first.crash()
        defer { kill(-pid, SIGKILL) }

        // What the crash leaves when it lands between the commit that decides the kill and the
        // kill itself: the task gone, the ledger saying the kill was decided, the process alive.
        var decided = try ledger(env)
        decided.processes[0].killDecidedAt = Date()
        try StateFiles.write(try JSONFormat.encode(decided), to: env.paths.processes, durable: false)
        try FileManager.default.removeItem(atPath: env.paths.task(TaskKey(app: try Identifier(validating: "com.example.stubborn"),
                                                                            identifier: try Identifier(validating: "com.example.stubborn.work"))))
        #expect(processIsAlive(pid))

        let second = try env.startDaemon()
        defer { second.stop() }
        try env.waitUntil("the process to be killed") { ended(pid) }
        let kills = env.events(.killed)
        #expect(kills.map(\.pid) == [pid] && kills.first?.reason == "killAfterRestart", "\(env.events().map(\.message))")
        try env.waitUntil("the ledger to forget it") { (try? ledger(env))?.processes.isEmpty == true }
    }

    @Test func aProcessOfALaunchNoCommittedStateKnowsIsEndedAtStart() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.orphan", identifiers: ["com.example.orphan.work"], script: "exit 0\n")
        // A process as the scheduler would have started it in a turn whose commit never happened,
        // with a child of its own, and a process of another state directory that must be left alone.
        let marker = ["BGTASK_STATE_DIR": env.state, "BGTASK_APP_ID": "com.example.orphan",
                      "BGTASK_LAUNCH_ID": "com.example.orphan-1700000000000"]
        // Spawned as the scheduler spawns: leading a process group of its own.
        let orphan = try Spawn.start("/bin/bash", ["-c", "sleep 60 & wait $!"],
                                     environment: ProcessInfo.processInfo.environment.merging(marker) { $1 },
                                     stdout: "/dev/null", stderr: "/dev/null")
        defer { kill(orphan, SIGKILL); _ = Spawn.wait(orphan) }
        var otherMarker = marker
        otherMarker["BGTASK_STATE_DIR"] = env.root + "/elsewhere"
        let stranger = try Spawn.start("/bin/sleep", ["60"], environment: ProcessInfo.processInfo.environment.merging(otherMarker) { $1 },
                                       stdout: "/dev/null", stderr: "/dev/null")
        defer { kill(stranger, SIGKILL); _ = Spawn.wait(stranger) }
        let children = try #require(try waitForChildren(of: orphan))

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("the orphan and its child to be killed") { ended(orphan) && children.allSatisfy(ended) }
        let kills = env.events(.killed).filter { $0.reason == "unsupervised" }
        #expect(kills.map(\.pid).contains(orphan), "\(env.events().map(\.message))")
        #expect(processIsAlive(stranger), "a process of another state directory is not the scheduler's")
    }

    /// Submits `<app>.work` and simulates its launch; returns the pid the app's script printed
    /// first (`started PID`).
    private func launch(_ app: String, in env: TestEnvironment) throws -> Int32 {
        #expect(try env.bgctl("submit", "--app", app, "--id", "\(app).work", "--kind", "processing", "--earliest", "+600").status == 0)
        #expect(try env.bgctl("simulate-launch", "\(app).work").status == 0)
        try env.waitUntil("the app") { env.output(of: app).count == 1 }
        return try #require(Int32(env.output(of: app)[0].dropFirst("started ".count)))
    }

    private func ledger(_ env: TestEnvironment) throws -> ProcessLedger {
        try JSONFormat.decode(ProcessLedger.self, from: try StateFiles.read(env.paths.processes))
    }

    /// The pids of `pid`'s children, once it has one.
    private func waitForChildren(of pid: Int32) throws -> [Int32]? {
        for _ in 0..<200 {
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            let pids = text.split(separator: " ").compactMap { Int32($0) }
            if !pids.isEmpty { return pids }
            usleep(20_000)
        }
        return nil
    }
}
