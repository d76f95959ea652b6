import ArgumentParser
import FoundationEssentials
import Glibc
import TaskState

/// `bgctl`: everything `bgtop` can do, from the command line.
@main
struct BGCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bgctl",
        abstract: "Drive and inspect the background-task scheduler (bgtaskd).",
        discussion: """
        Exit codes: 0 done, 1 refused by the scheduler, 2 bad usage, 3 scheduler not running where one is needed,
        4 the state or config directory cannot be used here (unsafe, unreadable, disk full).
        """,
        version: "0.1.0",
        subcommands: [
            Status.self, List.self, Submit.self, Cancel.self, SimulateLaunch.self, SimulateExpiration.self,
            Complete.self, BeginFinishing.self, Apps.self, AppSwitch.self, ConditionsCommand.self, Events.self,
            TransferCommand.self, PushCommand.self, UsageCommand.self, Watch.self,
            ReportCallCommand.self, Logs.self, Install.self, Uninstall.self, Metrics.self, BatchCommand.self,
        ])

    /// `--state` and `--config` before the subcommand (`bgctl --state DIR status`). The parser hands
    /// these values to each subcommand's own `LocationOptions` group (an option group of the same
    /// type in a parent and a child is decoded once), so either place works for every subcommand.
    @OptionGroup var locations: LocationOptions

    /// Exit codes of the contract.
    enum Exit {
        static let refused = ExitCode(1)
        static let usage = ExitCode(2)
        static let notRunning = ExitCode(3)
        static let localFailure = ExitCode(4)
    }

    /// Parses and runs, mapping every failure to one line on stderr and the contract's exit codes.
    static func main() {
        if let topic = HelpTopic.unknown(in: Array(CommandLine.arguments.dropFirst())) {
            printError("no such command: \(topic) (see bgctl --help)")
            Glibc.exit(Exit.usage.rawValue)
        }
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch let exit as ExitCode {
            Glibc.exit(exit.rawValue)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                // --help and --version.
                self.exit(withError: error)
            }
            let message = self.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            printError(message)
            Glibc.exit(Exit.usage.rawValue)
        }
    }
}

/// Writes `bgctl: <message>` to stderr, as one line: a message may echo a client's text.
func printError(_ message: String) {
    StandardStreams.write(Data("bgctl: \(TerminalText.escaped(message))\n".utf8), to: STDERR_FILENO)
}

/// Prints one line of text output with any control character in it escaped (see ``TerminalText``).
func printLine(_ line: String) {
    print(TerminalText.escaped(line))
}
