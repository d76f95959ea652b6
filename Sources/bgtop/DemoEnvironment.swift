import FoundationEssentials
import Glibc
import Logging
import SchedulerRuntime
import TaskState

/// `bgtop --demo`: the real scheduler on a thread of this process, a temporary state directory,
/// demo apps that are real processes (Stormy, built with the BackgroundTasks library, and bash
/// scripts speaking the inbox protocol directly, as any program may), and an HTTP server on
/// loopback for their background transfers, chosen so every panel moves within two seconds.
final class DemoEnvironment {
    let root: String
    let stateDirectory: String
    let configDirectory: String
    private let scheduler: SchedulerThread
    private let transfers: DemoTransfers
    private let pushes: DemoPushes
    private let refill: DemoTransferRefill
    private var stopped = false

    private init(root: String, scheduler: SchedulerThread, transfers: DemoTransfers, pushes: DemoPushes) {
        self.root = root
        stateDirectory = root + "/state"
        configDirectory = root + "/config"
        self.scheduler = scheduler
        self.transfers = transfers
        self.pushes = pushes
        refill = DemoTransferRefill(inbox: Inbox(paths: StatePaths(root: root + "/state")), url: transfers.refillURL)
    }

    /// The dashboard has read new state: a download that completed is followed by a new one.
    func stateWasRead(transfers: [TransferRecord]) {
        guard !stopped else { return }
        refill.follow(transfers)
    }

    static func start() throws -> DemoEnvironment {
        let root = FileManager.default.temporaryDirectory.path + "/bgtop-demo-\(getpid())-\(UUID().uuidString.prefix(6))"
        let state = root + "/state", config = root + "/config"
        // 0700 whatever the umask: the scheduler refuses a config others could write (StrictModes).
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for directory in [config, config + "/apps"] {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let transfers: DemoTransfers
        let pushes: DemoPushes
        do {
            transfers = try DemoTransfers.start(root: root)
        } catch {
            try? FileManager.default.removeItem(atPath: root)
            throw error
        }
        do {
            pushes = try DemoPushes.start()
        } catch {
            transfers.stop()
            try? FileManager.default.removeItem(atPath: root)
            throw error
        }
        let stormy = DemoApps.stormyExecutable.map { (executable: $0, weatherURL: transfers.weatherURL) }
        try DemoApps.write(root: root, configDirectory: config, stormy: stormy, pushTopic: pushes.topicURL)

        let logPath = root + "/bgtaskd.log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let logger = Logger(label: "bgtaskd") { DemoLogHandler(path: logPath, label: $0) }
        let daemon: SchedulerDaemon
        do {
            daemon = try SchedulerDaemon(stateDirectory: state, configDirectory: config, logger: logger, signals: [SIGCHLD])
        } catch {
            transfers.stop()
            pushes.stop()
            try? FileManager.default.removeItem(atPath: root)
            throw error
        }
        let thread = SchedulerThread(daemon: daemon)
        let environment = DemoEnvironment(root: root, scheduler: thread, transfers: transfers, pushes: pushes)
        let inbox = Inbox(paths: StatePaths(root: state))
        let now = Date()
        for command in DemoApps.initialCommands(now: now, stormy: stormy != nil) + transfers.initialCommands(root: root, now: now) {
            try inbox.enqueue(command)
        }
        thread.start()
        return environment
    }

    /// Stops the scheduler, kills the demo apps and removes every temporary file. Idempotent.
    func stop() {
        guard !stopped else { return }
        stopped = true
        scheduler.stop()
        transfers.stop()
        pushes.stop()
        let paths = StatePaths(root: stateDirectory)
        for task in StateSnapshot.load(paths).tasks {
            if let group = task.processGroup { kill(-group, SIGKILL) } else { kill(task.pid, SIGKILL) }
        }
        // Apps may still be starting or finishing: their process groups carry the demo's path.
        try? FileManager.default.removeItem(atPath: root)
    }
}

/// Writes the scheduler's log to a file: the terminal belongs to the dashboard.
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
