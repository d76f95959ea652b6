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
        // A new directory, never one that was there (EEXIST fails); 0700 whatever the umask: the
        // scheduler refuses a config others could write (StrictModes).
        guard mkdir(root, 0o700) == 0, chmod(root, 0o700) == 0 else {
            throw StateError.system(operation: "cannot create", path: root, errno: errno)
        }
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

    /// Runs the demo until SIGTERM or SIGINT (or the death of the process that started it), then
    /// removes everything. Returns the exit status. `notices`: lines for the log once it exists.
    static func run(logLevel: Logger.Level, notices: [String]) -> Int32 {
        // Before any thread exists (the servers start some), the signals the scheduler reads
        // through its signalfd: a stop that comes before it waits for it (so the directory is
        // always removed), and no other thread takes a SIGCHLD the scheduler must reap by.
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGCHLD] { sigaddset(&handled, signal) }
        pthread_sigmask(SIG_BLOCK, &handled, nil)
        // A closed pipe is an error to write, not a death: the demo must still clean up after itself.
        signal(SIGPIPE, SIG_IGN)
        // The demo must not outlive the bgtop that started it, even one killed with SIGKILL.
        _ = bg_set_parent_death_signal(SIGTERM)
        if let expected = ProcessInfo.processInfo.environment[DemoReadiness.parentVariable], expected != String(getppid()) {
            StandardStreams.write(Data("bgtaskd: the demo's parent (pid \(TerminalText.escaped(expected))) has exited\n".utf8), to: STDERR_FILENO)
            return 1
        }
        // Not passed on to the demo's launches.
        unsetenv(DemoReadiness.parentVariable)

        let host: DemoHost
        let daemon: SchedulerDaemon
        do {
            host = try start()
            var logger = Logger(label: "bgtaskd") { [path = host.logPath] in DemoLogHandler(path: path, label: $0) }
            logger.logLevel = logLevel
            for notice in notices { logger.notice("\(notice)") }
            do {
                daemon = try SchedulerDaemon(stateDirectory: host.readiness.state, configDirectory: host.readiness.config, logger: logger,
                                             holdsOffSleep: false)
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
        var said = false
        daemon.whenReady = { [readiness = host.readiness, logPath = host.logPath] in
            let line = (try? JSONFormat.encodeLine(readiness)) ?? Data()
            said = (try? StateFiles.writeAll(STDOUT_FILENO, line, path: "standard output")) != nil
            // Nobody heard it (bgtop is gone): a demo nobody watches stops.
            if !said { kill(getpid(), SIGTERM) }
            // From here the terminal (or bgtop's pipe) gets nothing: what would go there goes to the log.
            let log = open(logPath, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            if log >= 0 {
                dup2(log, STDOUT_FILENO)
                dup2(log, STDERR_FILENO)
                close(log)
            }
        }
        let status = daemon.run()
        if !said {
            // Stopped before it was ready: the reason is in the log, which goes with the directory.
            let log = (try? StateFiles.read(host.logPath)).map { String(decoding: $0.suffix(2048), as: UTF8.self) } ?? ""
            let last = log.split(separator: "\n").last.map(String.init) ?? "no log"
            StandardStreams.write(Data("bgtaskd: the demo stopped before it was ready: \(TerminalText.escaped(last))\n".utf8), to: STDERR_FILENO)
        }
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
