import ArgumentParser
import Foundation
import Logging
import SchedulerRuntime
import TaskState

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
        """,
        version: SchedulerDaemon.version)

    @Option(name: .long, help: "The state directory.")
    var state: String?

    @Option(name: .long, help: "The config directory.")
    var config: String?

    @Option(name: .long, help: "Log level on stderr: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
    }

    func run() throws {
        var logger = Logger(label: "bgtaskd") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let stateDirectory = Locations.stateDirectory(flag: state)
        let configDirectory = Locations.configDirectory(flag: config)
        let daemon: SchedulerDaemon
        do {
            daemon = try SchedulerDaemon(stateDirectory: stateDirectory, configDirectory: configDirectory, logger: logger)
        } catch {
            // One line: a bad settings file's reason may quote its text.
            FileHandle.standardError.write(Data("bgtaskd: \(TerminalText.escaped(error.description))\n".utf8))
            throw ExitCode(1)
        }
        logger.info("scheduling from \(stateDirectory) with apps from \(configDirectory)/apps")
        let status = daemon.run()
        if status != 0 { throw ExitCode(status) }
    }
}
