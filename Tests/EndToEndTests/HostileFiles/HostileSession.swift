import Foundation
import TaskState
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The real programs over one prepared environment, every step with a time limit; when the tests
/// run as root they run as `nobody` (see ``BoundedProcess/unprivilegedPrefix``).
struct HostileSession {
    let env: TestEnvironment
    /// The app the round trip submits for; its manifest is good.
    static let probeApp = "com.example.probe"

    init(_ env: TestEnvironment) throws {
        self.env = env
        try env.addApp(Self.probeApp, identifiers: ["\(Self.probeApp).job"], script: "exit 0\n")
    }

    /// A program of the project with this environment's directories, as the unprivileged user.
    func command(_ program: String, _ arguments: [String]) -> [String] {
        BoundedProcess.unprivilegedPrefix + [TestEnvironment.binaries + "/" + program] + arguments
            + ["--state", env.state, "--config", env.config]
    }

    func bgctl(_ arguments: String...) throws -> TestEnvironment.Result {
        BoundedProcess.handOver(env.root)
        return try BoundedProcess.run(command("bgctl", arguments))
    }

    func bgtopBatch() throws -> TestEnvironment.Result {
        BoundedProcess.handOver(env.root)
        return try BoundedProcess.run(command("bgtop", ["--batch"]))
    }

    /// A running scheduler, or how it refused to start.
    enum Start {
        case running(HostileDaemon)
        case refused(status: Int32, stderr: String)
    }

    /// Starts `bgtaskd`; waits until it has committed (its own heartbeat) or has exited.
    func startDaemon(timeout: TimeInterval = 20) throws -> Start {
        BoundedProcess.handOver(env.root)
        let log = "\(env.root)/bgtaskd-\(UUID().uuidString.prefix(6))"
        let pid = try BoundedProcess.start(command("bgtaskd", []), stdout: log + ".out", stderr: log + ".err")
        let daemon = HostileDaemon(pid: pid, log: log + ".err")
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = BoundedProcess.wait(pid, timeout: 0) {
                daemon.exited = status
                return .refused(status: status, stderr: daemon.stderr)
            }
            if let data = try? StateFiles.read(env.paths.heartbeat),
               let heartbeat = try? JSONFormat.decode(DaemonHeartbeat.self, from: data), heartbeat.pid == pid {
                return .running(daemon)
            }
            usleep(20_000)
        }
        daemon.kill()
        throw TestFailure("hang: bgtaskd neither committed nor exited within \(timeout) s (killed)\n\(daemon.stderr)")
    }

    /// A command through the inbox, answered: proof that the scheduler still applies commands.
    func roundTrip() throws -> TestEnvironment.Result {
        BoundedProcess.handOver(env.root)
        return try BoundedProcess.run(command("bgctl", ["submit", "--app", Self.probeApp, "--id", "\(Self.probeApp).job",
                                                 "--kind", "processing", "--earliest", "+3600"]))
    }
}

/// A `bgtaskd` started by ``HostileSession``; killed when dropped if still running.
final class HostileDaemon {
    let pid: pid_t
    let log: String
    var exited: Int32?

    init(pid: pid_t, log: String) {
        self.pid = pid
        self.log = log
    }

    var stderr: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Whether it still runs (reaping it if it has ended).
    var isRunning: Bool {
        if exited != nil { return false }
        if let status = BoundedProcess.wait(pid, timeout: 0) {
            exited = status
            return false
        }
        return true
    }

    /// SIGTERM; its exit status, or a failure when it does not end within `timeout` seconds.
    func stop(timeout: TimeInterval = 20) throws -> Int32 {
        if let exited { return exited }
        Glibc.kill(pid, SIGTERM)
        guard let status = BoundedProcess.wait(pid, timeout: timeout) else {
            kill()
            throw TestFailure("hang: bgtaskd did not stop within \(timeout) s of SIGTERM (killed)")
        }
        exited = status
        return status
    }

    func kill() {
        guard exited == nil else { return }
        exited = BoundedProcess.end(pid)
    }

    deinit { kill() }
}
