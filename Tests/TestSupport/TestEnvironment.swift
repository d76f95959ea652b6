import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A private state and config directory pair with helpers to write apps, run `bgctl` and start
/// `bgtaskd`, all as real processes.
public final class TestEnvironment: @unchecked Sendable {
    public let root: String
    public let state: String
    public let config: String

    public init(_ name: String = #function) throws {
        let safe = name.filter { $0.isLetter || $0.isNumber }
        root = FileManager.default.temporaryDirectory.path + "/bgtop-e2e-\(safe.prefix(40))-\(UUID().uuidString.prefix(8))"
        state = root + "/state"
        config = root + "/config"
        // Modes set outright, not left to the umask: bgtaskd refuses a config that others may write.
        try FileManager.default.createDirectory(atPath: config + "/apps", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        chmod(config, 0o755)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    public var paths: StatePaths { StatePaths(root: state) }

    /// The folder holding the built `bgtaskd` and `bgctl`: the test bundle's own folder.
    public static let binaries: String = {
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
    public func addApp(_ id: String, identifiers: [String], modes: [String] = ["fetch", "processing"],
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

    public func writeSettings(_ settings: [String: Any]) throws {
        try writeJSON(settings, to: "\(config)/settings.json")
    }

    public func writeJSON(_ object: Any, to path: String) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
    }

    /// The lines an app script appended to its `$OUT` file.
    public func output(of app: String) -> [String] {
        guard let text = try? String(contentsOfFile: "\(root)/\(app).out", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    // MARK: - Processes

    public struct Result: CustomStringConvertible {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    }

    /// Runs `bgctl` with this environment's directories and waits for it.
    @discardableResult
    public func bgctl(_ arguments: String..., environment extra: [String: String] = [:]) throws -> Result {
        try run(Self.binaries + "/bgctl", arguments + ["--state", state, "--config", config], environment: extra)
    }

    /// Runs a program and captures its output.
    public func run(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:]) throws -> Result {
        var environment = ProcessInfo.processInfo.environment
        environment["BGTASK_STATE_DIR"] = nil
        environment["BGTASK_CONFIG_DIR"] = nil
        environment["BGTASK_APP_ID"] = nil
        // A test run from a handler's shell must not lend its launch's token to what it runs.
        environment["BGTASK_LAUNCH_TOKEN"] = nil
        for (key, value) in extra { environment[key] = value }
        let (status, stdout, stderr) = try Spawn.run(executable, arguments, environment: environment)
        return Result(status: status, stdout: stdout, stderr: stderr)
    }

    /// An app script that prints `firstLine`, then waits until its expiration signal (USR1),
    /// completes `identifier` successfully and exits. Its `sleep` is killed with it, so nothing
    /// the handler started outlives the test.
    public static func scriptCompletingOnExpiry(_ identifier: String, printing firstLine: String) -> String {
        """
        echo "\(firstLine)"
        sleep 30 &
        SLEEPER=$!
        trap 'kill $SLEEPER; "$BGCTL" complete \(identifier) --success; exit 0' USR1
        wait $SLEEPER
        """
    }

    /// Starts `bgtaskd` and waits until it holds the lock and has written its first commit: the
    /// heartbeat and the events of its start (a test reading the log at once finds them).
    public func startDaemon(environment extra: [String: String] = [:], arguments: [String] = []) throws -> DaemonProcess {
        let daemon = try DaemonProcess(environment: self, extra: extra, arguments: arguments)
        // Its first commit writes a heartbeat with its own pid (an earlier scheduler's may be there)
        // and appends its `daemonStarted` event, with what else the start recorded.
        try waitUntil("bgtaskd to start") {
            guard StateLock.holder(self.paths) == daemon.pid, let data = try? StateFiles.read(self.paths.heartbeat),
                  let heartbeat = try? JSONFormat.decode(DaemonHeartbeat.self, from: data), heartbeat.pid == daemon.pid else { return false }
            return EventLog(paths: self.paths).recent(limit: 1000).events.contains { $0.type == .daemonStarted && $0.pid == daemon.pid }
        }
        return daemon
    }

    // MARK: - Reading state

    /// `bgctl list --json`, parsed.
    public func list() throws -> [String: Any] {
        let result = try bgctl("list", "--json")
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw TestFailure("list --json failed: \(result)")
        }
        return object
    }

    public func requests() throws -> [[String: Any]] { try list()["requests"] as? [[String: Any]] ?? [] }
    public func tasks() throws -> [[String: Any]] { try list()["tasks"] as? [[String: Any]] ?? [] }

    /// Whether `journal.json` holds no record: missing, empty, or a zero byte where the first
    /// record would start (a checkpoint zeroes it and keeps its size).
    public var journalHoldsNoRecord: Bool {
        guard let data = try? StateFiles.read(paths.journal, maximumSize: 512 << 20) else { return true }
        return data.first.map { $0 == 0 } ?? true
    }

    /// Every event in the log (current and rotated), oldest first.
    public func events() -> [Event] { EventLog(paths: paths).recent(limit: .max).events }

    public func events(_ type: Event.Kind) -> [Event] { events().filter { $0.type == type } }

    /// ``waitUntil(_:timeout:_:)`` for async tests: sleeps without holding a thread of the
    /// cooperative pool, which servers running in the same process (the loopback HTTP server)
    /// need for their own tasks.
    public func eventually(_ what: String, timeout: TimeInterval = 10, _ condition: () throws -> Bool) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        if try condition() { return }
        throw TestFailure("timed out after \(timeout) s waiting for \(what)")
    }

    /// Waits for `condition`, checking every 20 ms, up to `timeout` seconds.
    @available(*, noasync, message: "blocks a thread of the shared pool; use eventually")
    public func waitUntil(_ what: String, timeout: TimeInterval = 10, _ condition: () throws -> Bool) throws {
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
public final class DaemonProcess: @unchecked Sendable {
    public let pid: pid_t
    public let logPath: String
    private var exitStatus: Int32?

    /// Starts `bgtaskd` on `environment`'s directories, with `extra` added to its environment
    /// (`NOTIFY_SOCKET`, say).
    public init(environment: TestEnvironment, extra: [String: String] = [:], arguments: [String] = []) throws {
        logPath = "\(environment.root)/bgtaskd-\(UUID().uuidString.prefix(6)).log"
        pid = try Spawn.start(TestEnvironment.binaries + "/bgtaskd",
                              ["--state", environment.state, "--config", environment.config, "--log-level", "debug"] + arguments,
                              environment: ProcessInfo.processInfo.environment.merging(extra) { $1 },
                              stdout: logPath, stderr: logPath + ".err")
    }

    public var log: String { (try? String(contentsOfFile: logPath + ".err", encoding: .utf8)) ?? "" }
    public var isRunning: Bool { exitStatus == nil && processIsAlive(pid) }

    /// SIGTERM, then waits; returns the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if let exitStatus { return exitStatus }
        kill(pid, SIGTERM)
        let status = Spawn.wait(pid)
        exitStatus = status
        return status
    }

    /// SIGKILL, as a crash would.
    public func crash() {
        guard exitStatus == nil else { return }
        kill(pid, SIGKILL)
        exitStatus = Spawn.wait(pid)
    }

    deinit { crash() }
}

public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Whether a process exists (and is not a zombie).
public func processIsAlive(_ pid: Int32) -> Bool {
    guard kill(pid, 0) == 0 else { return false }
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return false }
    let state = stat[stat.index(close, offsetBy: 2)]
    return state != "Z"
}
