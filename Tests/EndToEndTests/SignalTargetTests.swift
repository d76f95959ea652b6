import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `attach` and `begin-finishing` name a pid that the scheduler will later signal and kill. Only
/// a process it launched, or one running the app's executable, of its own uid, is accepted; never
/// itself and never pid 1 (issue 11, item 9).
@Suite struct SignalTargetTests {
    static let app = "com.example.chat"
    static let refresh = "com.example.chat.refresh"

    /// An environment with one script app, a short finishing budget and grace, and a scheduler.
    private func start() throws -> (TestEnvironment, DaemonProcess) {
        let env = try TestEnvironment()
        try env.writeSettings(["finishingBudgetSeconds": 0.3, "expirationGraceSeconds": 0.5])
        try env.addApp(Self.app, identifiers: [Self.refresh], script: "exit 0\n")
        return (env, try env.startDaemon())
    }

    /// Writes an `attach` command for `pid` into the inbox, as the library would, and returns its outcome.
    private func attach(_ env: TestEnvironment, pid: Int32) async throws -> CommandOutcome {
        let id = Command.newID()
        let text = """
            {"id":"\(id)","issuedAt":"\(JSONFormat.string(from: Date()))","type":"attach","app":"\(Self.app)",\
            "pid":\(pid),"identifiers":["\(Self.refresh)"]}
            """
        let temporary = "\(env.state)/inbox/tmp/\(id).json"
        try FileManager.default.createDirectory(atPath: "\(env.state)/inbox/tmp", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, "\(env.paths.inboxNew)/\(id).json") == 0)
        try await env.eventually("the attach outcome") { StateFiles.exists(env.paths.outcome(id)) }
        return try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
    }

    /// Expires whatever finishing task may exist and waits past its grace period, so a signal or
    /// kill that was going to be sent has been.
    private func expireAndWaitOutGrace(_ env: TestEnvironment) throws {
        _ = try env.bgctl("simulate-expiration", "finishing-1", "--app", Self.app)
        usleep(1_500_000)
    }

    @Test func theSchedulerRefusesItsOwnPidAndSurvivesAnExpiry() async throws {
        let (env, daemon) = try start()
        defer { daemon.stop() }

        let finishing = try env.bgctl("begin-finishing", "--app", Self.app, "--pid", "\(daemon.pid)")
        #expect(finishing.status == 1, "\(finishing)")
        #expect(finishing.stderr == "bgctl: notAppProcess: pid \(daemon.pid) is bgtaskd itself; the scheduler never signals itself\n")
        let attached = try await attach(env, pid: daemon.pid)
        #expect(attached.error?.name == "notAppProcess", "\(attached)")

        try expireAndWaitOutGrace(env)
        #expect(daemon.isRunning, "bgtaskd signalled itself:\n\(daemon.log.suffix(2000))")
        #expect(try env.tasks().isEmpty)
        #expect(env.events(.attached).isEmpty)
        #expect(env.events(.refused).filter { $0.reason == "notAppProcess" }.count == 2)
    }

    @Test func theSchedulerRefusesPidOne() async throws {
        let (env, daemon) = try start()
        defer { daemon.stop() }

        let finishing = try env.bgctl("begin-finishing", "--app", Self.app, "--pid", "1")
        #expect(finishing.status == 1, "\(finishing)")
        #expect(finishing.stderr.hasPrefix("bgctl: notAppProcess: pid 1 is the init process"), "\(finishing)")
        let attached = try await attach(env, pid: 1)
        #expect(attached.error?.name == "notAppProcess", "\(attached)")
        #expect(try env.tasks().isEmpty)
        #expect(env.events(.attached).isEmpty)
        #expect(daemon.isRunning)
    }

    @Test func anUnrelatedProcessOfTheSameUserIsRefusedAndNeverSignalled() async throws {
        let (env, daemon) = try start()
        defer { daemon.stop() }
        // Not the app's executable: a shell that notes every signal it gets and otherwise sleeps.
        let noted = "\(env.root)/victim.signals"
        let victim = try Spawn.start("/bin/bash", ["-c", """
            trap 'echo USR1 >> "\(noted)"' USR1
            trap 'echo TERM >> "\(noted)"' TERM
            while true; do sleep 300 & wait $!; done
            """], environment: [:], stdout: "/dev/null", stderr: "/dev/null")
        defer {
            kill(-victim, SIGKILL)
            kill(victim, SIGKILL)
            _ = Spawn.wait(victim)
        }
        usleep(200_000)  // Its traps are set.

        let finishing = try env.bgctl("begin-finishing", "--app", Self.app, "--pid", "\(victim)")
        #expect(finishing.status == 1, "\(finishing)")
        #expect(finishing.stderr.contains("notAppProcess: pid \(victim) runs "), "\(finishing)")
        #expect(finishing.stderr.contains("not the app's executable"), "\(finishing)")
        let attached = try await attach(env, pid: victim)
        #expect(attached.error?.name == "notAppProcess", "\(attached)")

        try expireAndWaitOutGrace(env)
        #expect(processIsAlive(victim), "the unrelated process was killed")
        #expect(!FileManager.default.fileExists(atPath: noted), "the unrelated process was signalled")
        #expect(env.events(.attached).isEmpty)
        #expect(daemon.isRunning)
    }

    @Test func aProcessRunningTheAppsExecutableIsAcceptedAndExpired() async throws {
        let env = try TestEnvironment()
        try env.writeSettings(["finishingBudgetSeconds": 0.3, "expirationGraceSeconds": 0.5])
        // The manifest's executable is the very file the process runs.
        try env.writeJSON(["id": Self.app, "executable": "/bin/sleep", "arguments": ["300"],
                           "permittedIdentifiers": [Self.refresh], "backgroundModes": ["fetch"]],
                          to: "\(env.config)/apps/\(Self.app).json")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let sleeper = try Spawn.start("/bin/sleep", ["300"], environment: [:], stdout: "/dev/null", stderr: "/dev/null")
        defer {
            kill(sleeper, SIGKILL)
            _ = Spawn.wait(sleeper)
        }

        let attached = try await attach(env, pid: sleeper)
        #expect(attached.error == nil, "\(attached)")
        let finishing = try env.bgctl("begin-finishing", "--app", Self.app, "--pid", "\(sleeper)")
        #expect(finishing.status == 0, "\(finishing)")
        #expect(finishing.stdout == "finishing-1\n")
        // sleep has no handler for SIGUSR1: the expiry signal ends it.
        #expect(try env.bgctl("simulate-expiration", "finishing-1", "--app", Self.app).status == 0)
        try await env.eventually("the expired process to die") { !processIsAlive(sleeper) }
        #expect(daemon.isRunning)
    }
}
