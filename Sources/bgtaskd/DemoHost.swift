import CLinuxSupport
import FoundationEssentials
import Glibc
import Logging
import SchedulerRuntime
import TaskState

/// `bgtaskd --demo`: the real scheduler on a temporary state directory, with demo apps that are
/// real processes (Stormy, built with the BackgroundTasks library, and bash scripts speaking the
/// inbox protocol directly, as any program may), an HTTP server on loopback for their background
/// transfers and a push server, chosen so every panel of `bgtop` moves within two seconds.
/// `bgtop --demo` starts it and reads its ``DemoReadiness`` line; it keeps nothing when it stops.
final class DemoHost {
    let readiness: DemoReadiness
    private let transfers: DemoTransfers
    private let pushes: DemoPushes
    let logPath: String

    private init(readiness: DemoReadiness, transfers: DemoTransfers, pushes: DemoPushes) {
        self.readiness = readiness
        self.transfers = transfers
        self.pushes = pushes
        logPath = readiness.root + "/bgtaskd.log"
    }

    /// Makes the directories, starts the servers and writes the apps' settings, scripts and manifests.
    static func start() throws -> DemoHost {
        let root = DemoReadiness.newRoot()
        // 0700 whatever the umask: the scheduler refuses a config others could write (StrictModes).
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            let transfers = try DemoTransfers.start(root: root)
            let readiness = DemoReadiness(root: root, refillURL: transfers.refillURL)
            let pushes: DemoPushes
            do {
                pushes = try DemoPushes.start()
            } catch {
                transfers.stop()
                throw error
            }
            let host = DemoHost(readiness: readiness, transfers: transfers, pushes: pushes)
            do {
                for directory in [readiness.config, readiness.config + "/apps", readiness.state] {
                    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                            attributes: [.posixPermissions: 0o700])
                }
                let stormy = DemoApps.stormyExecutable.map { (executable: $0, weatherURL: transfers.weatherURL) }
                try DemoApps.write(root: root, configDirectory: readiness.config, stormy: stormy, pushTopic: pushes.topicURL)
                _ = FileManager.default.createFile(atPath: host.logPath, contents: nil)
            } catch {
                host.stopServers()
                throw error
            }
            return host
        } catch {
            try? FileManager.default.removeItem(atPath: root)
            throw error
        }
    }

    /// The requests and transfers the demo starts with, put in the inbox before the scheduler starts.
    func enqueueInitialCommands() throws {
        let inbox = Inbox(paths: StatePaths(root: readiness.state))
        let now = Date()
        let stormy = DemoApps.stormyExecutable != nil
        for command in DemoApps.initialCommands(now: now, stormy: stormy) + transfers.initialCommands(root: readiness.root, now: now) {
            try inbox.enqueue(command)
        }
    }

    /// Once the scheduler has stopped: ends the demo apps it launched, stops the servers and
    /// removes the directory.
    func stop() {
        LaunchedProcessEnding.killAll(recordedIn: StatePaths(root: readiness.state))
        stopServers()
        try? FileManager.default.removeItem(atPath: readiness.root)
    }

    private func stopServers() {
        transfers.stop()
        pushes.stop()
    }

    /// Runs the demo until SIGTERM, SIGINT or SIGHUP (or the death of the process that started
    /// it), then removes everything. Returns the exit status.
    static func run(logLevel: Logger.Level) -> Int32 {
        // Before any thread exists (the servers start some): a stop signal that comes before the
        // scheduler reads its signalfd waits for it, so the directory is always removed.
        var stops = sigset_t()
        sigemptyset(&stops)
        for signal in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&stops, signal) }
        pthread_sigmask(SIG_BLOCK, &stops, nil)
        // The demo must not outlive the bgtop that started it, even one killed with SIGKILL.
        let parent = getppid()
        _ = bg_set_parent_death_signal(SIGTERM)
        if getppid() != parent { return 1 }

        let host: DemoHost
        let daemon: SchedulerDaemon
        do {
            host = try start()
            var logger = Logger(label: "bgtaskd") { [path = host.logPath] in DemoLogHandler(path: path, label: $0) }
            logger.logLevel = logLevel
            do {
                daemon = try SchedulerDaemon(stateDirectory: host.readiness.state, configDirectory: host.readiness.config, logger: logger)
                try host.enqueueInitialCommands()
            } catch {
                host.stop()
                throw error
            }
        } catch {
            StandardStreams.write(Data("bgtaskd: cannot start the demo: \(TerminalText.escaped("\(error)"))\n".utf8), to: STDERR_FILENO)
            return 1
        }
        // Once the first turn has applied the demo's requests, so a snapshot taken then shows them.
        daemon.whenReady = { [readiness = host.readiness, logPath = host.logPath] in
            let line = (try? JSONFormat.encodeLine(readiness)) ?? Data()
            StandardStreams.write(line, to: STDOUT_FILENO)
            // From here the terminal (or bgtop's pipe) gets nothing: what would go there goes to the log.
            let log = open(logPath, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            if log >= 0 {
                dup2(log, STDOUT_FILENO)
                dup2(log, STDERR_FILENO)
                close(log)
            }
        }
        let status = daemon.run()
        host.stop()
        return status
    }
}

/// Writes the demo scheduler's log to a file in its directory: the terminal belongs to the dashboard.
struct DemoLogHandler: LogHandler {
    let path: String
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        StandardStreams.write(Data("\(JSONFormat.string(from: Date())) \(event.level) \(event.message)\n".utf8), to: descriptor)
    }
}
