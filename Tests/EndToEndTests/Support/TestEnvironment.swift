import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A private state and config directory pair with helpers to write apps, run `bgctl` and start
/// `bgtaskd`, all as real processes.
final class TestEnvironment: @unchecked Sendable {
    let root: String
    let state: String
    let config: String

    init(_ name: String = #function) throws {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        root = FileManager.default.temporaryDirectory.path + "/bgtop-e2e-\(safe.prefix(40))-\(UUID().uuidString.prefix(8))"
        state = root + "/state"
        config = root + "/config"
        try FileManager.default.createDirectory(atPath: config + "/apps", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    var paths: StatePaths { StatePaths(root: state) }

    /// The folder holding the built `bgtaskd` and `bgctl`: the test bundle's own folder.
    static let binaries: String = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while !FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("bgtaskd").path) {
            let parent = url.deletingLastPathComponent()
            precondition(parent.path != url.path, "bgtaskd not found near \(CommandLine.arguments[0])")
            url = parent
        }
        return url.path
    }()

    // MARK: - Apps and settings

    /// Writes an executable bash script and its manifest. The script can use `$OUT` (a file in
    /// the environment's root) and `$BGCTL` (the bgctl binary).
    @discardableResult
    func addApp(_ id: String, identifiers: [String], modes: [String] = ["fetch", "processing"],
                signal: String? = nil, script: String) throws -> String {
        let scriptPath = "\(root)/\(id).sh"
        let header = """
        #!/bin/bash
        OUT='\(root)/\(id).out'
        BGCTL='\(Self.binaries)/bgctl'

        """
        try (header + script).write(toFile: scriptPath, atomically: true, encoding: .utf8)
        chmod(scriptPath, 0o755)
        var manifest: [String: Any] = [
            "id": id, "executable": scriptPath, "permittedIdentifiers": identifiers, "backgroundModes": modes,
        ]
        if let signal { manifest["expirationSignal"] = signal }
        try writeJSON(manifest, to: "\(config)/apps/\(id).json")
        return "\(root)/\(id).out"
    }

    func writeSettings(_ settings: [String: Any]) throws {
        try writeJSON(settings, to: "\(config)/settings.json")
    }

    func writeJSON(_ object: Any, to path: String) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// The lines an app script appended to its `$OUT` file.
    func output(of app: String) -> [String] {
        guard let text = try? String(contentsOfFile: "\(root)/\(app).out", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    // MARK: - Processes

    struct Result: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// Runs `bgctl` with this environment's directories and waits for it.
    @discardableResult
    func bgctl(_ arguments: String..., environment extra: [String: String] = [:]) throws -> Result {
        try run(Self.binaries + "/bgctl", arguments + ["--state", state, "--config", config], environment: extra)
    }

    /// Runs a program and captures its output.
    func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Result {
        var environment = ProcessInfo.processInfo.environment
        environment["BGTASK_STATE_DIR"] = nil
        environment["BGTASK_CONFIG_DIR"] = nil
        environment["BGTASK_APP_ID"] = nil
        for (key, value) in extra { environment[key] = value }
        let (status, stdout, stderr) = try Spawn.run(executable, arguments, environment: environment)
        return Result(status: status, stdout: stdout, stderr: stderr)
    }

    /// Starts `bgtaskd` and waits until it holds the lock and has written its first commit.
    func startDaemon() throws -> DaemonProcess {
        let daemon = try DaemonProcess(environment: self)
        // Its first commit writes a heartbeat with its own pid (an earlier scheduler's may be there).
        try waitUntil("bgtaskd to start") {
            guard StateLock.holder(self.paths) == daemon.pid, let data = try? StateFiles.read(self.paths.heartbeat),
                  let heartbeat = try? JSONFormat.decode(DaemonHeartbeat.self, from: data) else { return false }
            return heartbeat.pid == daemon.pid
        }
        return daemon
    }

    // MARK: - Reading state

    /// `bgctl list --json`, parsed.
    func list() throws -> [String: Any] {
        let result = try bgctl("list", "--json")
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("list --json failed: \(result)")
        }
        return object
    }

    func requests() throws -> [[String: Any]] { try list()["requests"] as? [[String: Any]] ?? [] }
    func tasks() throws -> [[String: Any]] { try list()["tasks"] as? [[String: Any]] ?? [] }

    /// Every event in the log (current and rotated), oldest first.
    func events() -> [Event] { EventLog(paths: paths).recent(limit: .max).events }

    func events(_ type: Event.Kind) -> [Event] { events().filter { $0.type == type } }

    /// Waits for `condition`, checking every 20 ms, up to `timeout` seconds.
    func waitUntil(_ what: String, timeout: TimeInterval = 10, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            usleep(20_000)
        }
        if try condition() { return }
        throw TestFailure("timed out after \(timeout) s waiting for \(what)")
    }
}

/// A running `bgtaskd`.
final class DaemonProcess: @unchecked Sendable {
    let pid: pid_t
    let logPath: String
    private var exitStatus: Int32?

    init(environment: TestEnvironment) throws {
        logPath = "\(environment.root)/bgtaskd-\(UUID().uuidString.prefix(6)).log"
        pid = try Spawn.start(TestEnvironment.binaries + "/bgtaskd",
                              ["--state", environment.state, "--config", environment.config, "--log-level", "debug"],
                              environment: ProcessInfo.processInfo.environment, stdout: logPath, stderr: logPath + ".err")
    }

    var log: String { (try? String(contentsOfFile: logPath + ".err", encoding: .utf8)) ?? "" }
    var isRunning: Bool { exitStatus == nil && processIsAlive(pid) }

    /// SIGTERM, then waits; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if let exitStatus { return exitStatus }
        kill(pid, SIGTERM)
        let status = Spawn.wait(pid)
        exitStatus = status
        return status
    }

    /// SIGKILL, as a crash would.
    func crash() {
        guard exitStatus == nil else { return }
        kill(pid, SIGKILL)
        exitStatus = Spawn.wait(pid)
    }

    deinit { crash() }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Whether a process exists (and is not a zombie).
func processIsAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(close, offsetBy: 2)]
    return state != "Z"
}
