import Foundation
import TaskState
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `bgtop --host` over loopback ssh beside a local `bgtop`, on the same state directory in the
/// same run: the time from a submit (bgctl starting) to the request's name on each screen. The
/// remote path adds ssh and `bgctl watch --json` to what the local one does.
enum RemoteLatency {
    struct Result {
        var local: [Double]
        var remote: [Double]
    }

    static func measure(submits: Int, root: String) throws -> Result {
        try FileManager.default.createDirectory(atPath: root + "/config/apps", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        chmod(root + "/config", 0o755)
        try FileManager.default.createDirectory(atPath: root + "/state", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let app = "com.bench.remote"
        let manifest: [String: Any] = ["id": app, "executable": "/bin/true", "permittedIdentifiers": (0..<submits).map { "\(app).r\($0)" },
                                       "backgroundModes": ["processing"]]
        try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: "\(root)/config/apps/\(app).json"))
        chmod("\(root)/config/apps/\(app).json", 0o644)
        let (bgtaskd, bgctl, bgtop) = (try IdleWakeups.locate("bgtaskd"), try IdleWakeups.locate("bgctl"), try IdleWakeups.locate("bgtop"))
        let daemon = try Spawn.start(bgtaskd, ["--state", root + "/state", "--config", root + "/config"],
                                     environment: ProcessInfo.processInfo.environment, stdout: root + "/bgtaskd.out", stderr: root + "/bgtaskd.err")
        defer {
            kill(daemon, SIGTERM)
            _ = Spawn.wait(daemon)
        }
        let server = try LoopbackSSHServer(in: root)
        defer { server.stop(mentioning: [root]) }
        let socket = "bgbench-remote-\(getpid())"
        defer { _ = IdleWakeups.tmux(socket, ["kill-server"], root: root) }
        let directories = "--state \(root)/state --config \(root)/config"
        let local = try TerminalSession(name: "local", command: "exec \(bgtop) \(directories)", socket: socket, scratch: root)
        let remote = try TerminalSession(
            name: "remote",
            command: "BGTOP_SSH_COMMAND='\(server.sshCommand)' exec \(bgtop) --host \(server.destination) --remote-bgctl \(bgctl) \(directories)",
            socket: socket, scratch: root)
        defer {
            local.stop()
            remote.stop()
        }
        try waitFor([local: "scheduler up", remote: "connected]"], timeout: 30)
        var result = Result(local: [], remote: [])
        for index in 0..<submits {
            let identifier = "\(app).r\(index)"
            // What the terminals said before the submit is not its effect.
            _ = local.read()
            _ = remote.read()
            let start = Monotonic.now()
            let submitted = try Spawn.run(bgctl, ["submit", "--app", app, "--id", identifier, "--kind", "processing", "--earliest", "+86400",
                                                  "--state", root + "/state", "--config", root + "/config"],
                                          environment: ProcessInfo.processInfo.environment)
            guard submitted.0 == 0 else { throw BenchError("bgctl submit failed: \(submitted.2)") }
            let seen = try waitFor([local: identifier, remote: identifier], timeout: 10)
            result.local.append(seen[local.name]! - start)
            result.remote.append(seen[remote.name]! - start)
            // An app may hold only so many pending processing requests: each goes once it is seen.
            let cancelled = try Spawn.run(bgctl, ["cancel", "--app", app, "--id", identifier,
                                                  "--state", root + "/state", "--config", root + "/config"],
                                          environment: ProcessInfo.processInfo.environment)
            guard cancelled.0 == 0 else { throw BenchError("bgctl cancel failed: \(cancelled.2)") }
        }
        return result
    }

    /// Waits until each session's screen shows its text; returns when (monotonic seconds) the
    /// output that put it there arrived, by session name.
    @discardableResult
    private static func waitFor(_ wanted: [TerminalSession: String], timeout: Double) throws -> [String: Double] {
        let deadline = Monotonic.now() + timeout
        var seen: [String: Double] = [:]
        var lastOutput: [String: Double] = [:]
        for session in wanted.keys { session.requestScreen() }
        while seen.count < wanted.count {
            guard Monotonic.now() < deadline else {
                throw BenchError("timed out waiting for \(wanted.filter { seen[$0.key.name] == nil }.map { "\($0.key.name): \($0.value)" })")
            }
            var poll = KernelPoll<String>()
            for session in wanted.keys where seen[session.name] == nil { poll.watch(session.name, session.descriptor) }
            _ = poll.wait(milliseconds: 100)
            for (session, text) in wanted where seen[session.name] == nil {
                for message in session.read() {
                    switch message {
                    case .output(let at):
                        lastOutput[session.name] = at
                        session.requestScreen()
                    case .reply(let tag, let lines, _):
                        if case .screen = tag, lines.contains(where: { $0.contains(text) }) {
                            seen[session.name] = lastOutput[session.name] ?? Monotonic.now()
                        }
                    }
                }
            }
        }
        return seen
    }
}

extension TerminalSession: Hashable {
    static func == (lhs: TerminalSession, rhs: TerminalSession) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
