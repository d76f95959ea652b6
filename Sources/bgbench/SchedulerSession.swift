import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// An app to write a manifest for.
struct BenchApp: Sendable {
    var id: Identifier
    var identifiers: [Identifier]
    var modes: [String]
    var executable: String
    /// Push topics (ntfy URLs) the app subscribes to.
    var push: [String] = []
}

/// One real `bgtaskd`, started as a child process on a fresh state and config folder, with the
/// given settings and app manifests; stopped with SIGTERM.
final class SchedulerSession {
    let folder: String
    let paths: StatePaths
    let config: String
    private let process = Process()
    private let logPath: String
    private var stopped = false

    /// Writes the config (`settings.json`, `apps/*.json`), starts `bgtaskd` and waits until it
    /// holds the lock and has made its first commit (manifests loaded). `environment` is added to
    /// the scheduler's own (`DBUS_SYSTEM_BUS_ADDRESS` for a private bus, say).
    /// `prepare` writes into the state folder before the scheduler starts (a large state to load,
    /// say); `startTimeout` bounds the wait for its first commit.
    init(workspace: Workspace, name: String, scheduler: String, settings: [String: Any], apps: [BenchApp],
         environment extra: [String: String] = [:], startTimeout: Double = 20,
         prepare: (StatePaths) throws -> Void = { _ in }) throws {
        let name = workspace.freshName(name)
        folder = try workspace.folder(name)
        paths = StatePaths(root: try workspace.folder("\(name)/state"))
        config = try workspace.folder("\(name)/config")
        let appsFolder = try workspace.folder("\(name)/config/apps")
        try Self.writeJSON(settings, to: "\(config)/settings.json")
        for app in apps {
            var manifest: [String: Any] = [
                "id": app.id.rawValue, "executable": app.executable,
                "permittedIdentifiers": app.identifiers.map(\.rawValue), "backgroundModes": app.modes,
            ]
            if !app.push.isEmpty { manifest["push"] = app.push.map { ["ntfy": $0] } }
            try Self.writeJSON(manifest, to: "\(appsFolder)/\(app.id.rawValue).json")
        }
        try prepare(paths)
        logPath = "\(folder)/bgtaskd.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath)
        process.executableURL = URL(fileURLWithPath: scheduler)
        process.arguments = ["--state", paths.root, "--config", config, "--log-level", "warning"]
        var environment = ProcessInfo.processInfo.environment
        for key in ["BGTASK_STATE_DIR", "BGTASK_CONFIG_DIR", "BGTASK_APP_ID"] { environment[key] = nil }
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = log
        process.standardError = log
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(scheduler): \(error)")
        }
        try? log?.close()
        let pid = process.processIdentifier
        Interruption.started(scheduler: pid)
        try waitUntil("bgtaskd to start (log: \(logPath))", timeout: startTimeout, interval: 0.005) {
            guard process.isRunning else {
                throw BenchError("bgtaskd exited at start with status \(process.terminationStatus): \(self.log)")
            }
            return StateLock.holder(paths) == pid && StateFiles.exists(paths.heartbeat)
        }
    }

    deinit { stop() }

    /// What the scheduler wrote on stderr.
    var log: String {
        ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether the scheduler is still running.
    var isRunning: Bool { process.isRunning }

    /// The scheduler's pid.
    var pid: Int32 { process.processIdentifier }

    /// CPU time the scheduler has used so far, from `/proc/<pid>/stat`, in seconds: user and
    /// system (the kernel's work on its behalf, such as writeback during `syncfs`).
    var cpuSeconds: (user: Double, system: Double)? {
        guard process.isRunning,
              let text = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // Fields resume after the command name; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (user / ticks, system / ticks)
    }

    /// Every event in the log, oldest first.
    func events(_ type: Event.Kind) -> [Event] {
        EventLog(paths: paths).recent(limit: .max).events.filter { $0.type == type }
    }

    /// SIGTERM and wait; then kills the process groups of tasks the scheduler left running.
    func stop() {
        guard !stopped else { return }
        stopped = true
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        Interruption.stopped(scheduler: process.processIdentifier)
        for task in StateSnapshot.load(paths).tasks {
            if let group = task.processGroup, group > 1 {
                kill(-group, SIGKILL)
            } else if task.pid > 1 {
                kill(task.pid, SIGKILL)
            }
        }
    }

    private static func writeJSON(_ object: [String: Any], to path: String) throws {
        do {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted])
            try data.write(to: URL(fileURLWithPath: path))
        } catch {
            throw BenchError("cannot write \(path): \(error.localizedDescription)")
        }
    }
}

/// Finds `bgtaskd` beside the running `bgbench` (the same build folder).
enum SchedulerBinary {
    static func locate() throws -> String {
        var folders = [URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()]
        // When bgbench was started through PATH, argv[0] has no folder; the kernel knows the file.
        folders.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        for folder in folders {
            let candidate = folder.appendingPathComponent("bgtaskd").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BenchError("""
            bgtaskd is not in \(folders[0].path), beside bgbench; build it there \
            (swift build -c release --product bgtaskd), or run: swift run -c release bgbench
            """)
    }
}
