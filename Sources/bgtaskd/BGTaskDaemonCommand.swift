import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import SchedulerRuntime
import TaskState
import TransferEngine

/// `bgtaskd`: the background-task scheduler.
@main
struct BGTaskDaemonCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bgtaskd",
        abstract: "The background-task scheduler: launches apps for their requests and enforces their budgets.",
        discussion: """
        Runs in the foreground until SIGTERM or SIGINT. One scheduler per state directory.
        State: --state, else $BGTASK_STATE_DIR, else $XDG_STATE_HOME/bgtask.
        Config (apps/*.json manifests, settings.json): --config, else $BGTASK_CONFIG_DIR, else $XDG_CONFIG_HOME/bgtask.
        Under a service manager (systemd Type=notify) it reports readiness, its counts, watchdog pings and its stop \
        through $NOTIFY_SOCKET; see docs/service.md. bgctl install writes such a unit.
        """,
        version: SchedulerDaemon.version)

    @Option(name: .long, help: "The state directory.")
    var state: String?

    @Option(name: .long, help: "The config directory.")
    var config: String?

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Option(name: .long, help: ArgumentHelp(
        "Serve Prometheus metrics at http://ADDRESS/metrics (e.g. 127.0.0.1:9595; port 0 picks one and logs it).",
        valueName: "host:port"))
    var metrics: String?

    @Flag(name: .long, help: ArgumentHelp(
        "Run on a new temporary state directory with demo apps and loopback HTTP and push servers, as bgtop --demo does.",
        discussion: "Prints one JSON line (root, state, config, refillURL) once ready; the log goes to bgtaskd.log there. Ends on SIGTERM or SIGINT, or when the process that started it exits, and then removes the directory and ends the demo apps."))
    var demo = false

    func validate() throws {
        if demo && (state != nil || config != nil || metrics != nil) {
            throw ValidationError("--demo makes its own state and config directories and serves no metrics: leave out --state, --config and --metrics")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        if let metrics, MetricsServer.parse(metrics) == nil {
            throw ValidationError("bad --metrics '\(TerminalText.escaped(metrics))': expected HOST:PORT (an IP address or localhost, a port from 0 to 65535)")
        }
    }

    func run() throws {
        // Before any task starts: an idle daemon wakes zero times, even after its first transfer.
        let onEventLoops = TransferEngine.runGlobalExecutorOnEventLoops()
        let notice = "Swift concurrency stays on Dispatch's pool: after its first transfer bgtaskd wakes once a second"
        if demo {
            // Its stdout and stderr carry its one line; the notice goes to its log.
            let status = DemoHost.run(logLevel: Logger.Level(rawValue: logLevel) ?? .info, notices: onEventLoops ? [] : [notice])
            if status != 0 { throw ExitCode(status) }
            return
        }
        var logger = Logger(label: "bgtaskd") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        if !onEventLoops { logger.notice("\(notice)") }
        let stateDirectory = Locations.stateDirectory(flag: state)
        let configDirectory = Locations.configDirectory(flag: config)
        // Read (and unset, so launched apps do not inherit it) before anything is started.
        let service = ServiceNotification.fromEnvironment(logger: logger)
        let daemon: SchedulerDaemon
        do {
            daemon = try SchedulerDaemon(stateDirectory: stateDirectory, configDirectory: configDirectory, logger: logger,
                                         service: service)
        } catch {
            // One line: a bad settings file's reason may quote its text.
            StandardStreams.write(Data("bgtaskd: \(TerminalText.escaped(error.description))\n".utf8), to: STDERR_FILENO)
            service?.failed("cannot start: \(TerminalText.escaped(error.description))")
            throw ExitCode(1)
        }
        var server: MetricsServer?
        if let metrics, let (host, port) = MetricsServer.parse(metrics) {
            do {
                server = try MetricsServer(host: host, port: port, paths: StatePaths(root: stateDirectory))
            } catch {
                StandardStreams.write(Data("bgtaskd: cannot serve metrics on \(metrics): \(TerminalText.escaped("\(error)"))\n".utf8), to: STDERR_FILENO)
                service?.failed("cannot serve metrics on \(metrics)")
                throw ExitCode(1)
            }
            logger.info("serving metrics at http://\(server?.boundAddress ?? metrics)/metrics")
        }
        defer { server?.stop() }
        logger.info("scheduling from \(stateDirectory) with apps from \(configDirectory)/apps")
        let status = daemon.run()
        if status != 0 { throw ExitCode(status) }
    }
}
