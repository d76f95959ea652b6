import ArgumentParser
import CursesTerminal
import Dashboard
import FoundationEssentials
import Glibc
import TaskState

/// `bgtop`: the live dashboard of background work.
@main
struct BGTopCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bgtop",
        abstract: "A live dashboard of background tasks: pending requests, running handlers, transfers, events.",
        discussion: KeyBindings.commandLineHelp + "\n\n" + LogPagerKeys.commandLineHelp,
        version: "0.1.0")

    @Option(name: .long, help: "The state directory (default: $BGTASK_STATE_DIR, else $XDG_STATE_HOME/bgtask).")
    var state: String?

    @Option(name: .long, help: "The config directory (default: $BGTASK_CONFIG_DIR, else $XDG_CONFIG_HOME/bgtask).")
    var config: String?

    @Option(name: .long, help: "A theme name (see docs/themes.md) or a path to a .theme file.")
    var theme: String?

    @Flag(name: .long, help: "Show everything, change nothing: \(KeyBindings.refusedInReadOnlySummary) are disabled.")
    var readOnly = false

    @Flag(name: .long, help: "Do not capture the mouse.")
    var noMouse = false

    @Flag(name: .long, help: "Print one plain-text snapshot and exit, like top -b.")
    var batch = false

    @Flag(name: .long, help: "Run the real scheduler (bgtaskd --demo, beside bgtop) on a temporary state directory with demo apps.")
    var demo = false

    @Option(name: .long, help: ArgumentHelp(
        "Show another machine's state over ssh (USER@HOST, or a Host of your ssh config); repeat for several, H switches.",
        discussion: "ssh runs 'bgctl watch --json' there; --state and --config name that machine's directories. The ssh command is $BGTOP_SSH_COMMAND (default: ssh), run with -o BatchMode=yes."))
    var host: [String] = []

    @Option(name: .customLong("remote-bgctl"), help: "The path of bgctl on the --host machines (default: bgctl, found on their PATH).")
    var remoteBgctl: String?

    func run() throws {
        // Before any thread exists: these signals are read through a signalfd, so no thread may
        // take them the usual way. SIGCHLD too: the children (ssh, the demo's scheduler) are reaped
        // through their pidfds.
        var handled = sigset_t()
        sigemptyset(&handled)
        for signal in [SIGWINCH, SIGINT, SIGTERM, SIGHUP, SIGCHLD] { sigaddset(&handled, signal) }
        pthread_sigmask(SIG_BLOCK, &handled, nil)

        let environment = ProcessInfo.processInfo.environment
        let noColor = !(environment["NO_COLOR"] ?? "").isEmpty
        let catalog = ThemeCatalog(searchDirectories: ThemeCatalog.defaultSearchDirectories(
            environment: environment, executablePath: CommandLine.arguments[0]))
        var chosen = Theme.builtInDefault
        var themeProblem: String?
        if let theme {
            switch catalog.load(theme) {
            case .success(let loaded): chosen = loaded
            case .failure(let error): themeProblem = "\(error.description); using the default theme"
            }
        }
        // NO_COLOR wins over any theme.
        if noColor { chosen = Theme.monochrome }

        if !host.isEmpty || remoteBgctl != nil { try checkRemoteOptions() }

        var demoEnvironment: DemoScheduler?
        var stateDirectory = Locations.stateDirectory(flag: state)
        var configDirectory = Locations.configDirectory(flag: config)
        if demo {
            do {
                let started = try DemoScheduler.start(environment: environment)
                demoEnvironment = started
                stateDirectory = started.stateDirectory
                configDirectory = started.configDirectory
            } catch {
                fail("cannot start the demo: \(error)")
            }
        }
        defer { demoEnvironment?.stop() }

        let reader = SnapshotReader(paths: StatePaths(root: stateDirectory), configDirectory: configDirectory)
        if batch && host.isEmpty {
            print(BatchOutput.render(reader.read(), width: Int(environment["COLUMNS"] ?? "") ?? 120))
            return
        }
        if environment["TERM"] == nil || environment["TERM"] == "dumb" || isatty(STDOUT_FILENO) == 0 || isatty(STDIN_FILENO) == 0 {
            demoEnvironment?.stop()
            fail("not a terminal (or TERM=dumb): use 'bgtop --batch' for a snapshot, or 'bgctl list'")
        }
        let terminal: CursesTerminal
        do {
            terminal = try CursesTerminal.open(mouse: !noMouse, colors: !noColor && !chosen.isMonochrome)
        } catch {
            demoEnvironment?.stop()
            fail("\(error.description); use 'bgtop --batch' or 'bgctl list'")
        }
        CrashGuard.install()
        let others = noColor ? [] : catalog.availableNames().compactMap { try? catalog.load($0).get() }
        var signal: Int32?
        var source: DashboardSource?
        do {
            // SIGCHLD stays blocked but is not the dashboard's: children are waited for on their pidfds.
            var dashboardSignals = sigset_t()
            sigemptyset(&dashboardSignals)
            for signal in [SIGWINCH, SIGINT, SIGTERM, SIGHUP] { sigaddset(&dashboardSignals, signal) }
            let chosenSource: DashboardSource
            if host.isEmpty {
                chosenSource = try LocalStateSource(reader: reader)
            } else {
                let sshCommand = environment["BGTOP_SSH_COMMAND"]
                chosenSource = RemoteHosts(host.map { SSHLaunch(host: $0, sshCommand: sshCommand, remoteBgctl: remoteBgctl ?? "bgctl",
                                                                state: state, config: config) },
                                           environment: environment)
            }
            source = chosenSource
            let loop = try DashboardLoop(
                terminal: terminal, source: chosenSource, themes: ThemeRotation(first: chosen, others: others),
                readOnly: readOnly, signals: dashboardSignals, initialStatus: themeProblem,
                stateRead: demoEnvironment.map { demo in { demo.stateWasRead(transfers: $0.transfers) } })
            signal = loop.run()
            // ssh is ended and reaped whatever ended the loop (q, SIGTERM, SIGHUP).
            chosenSource.close()
        } catch {
            source?.close()
            terminal.close()
            demoEnvironment?.stop()
            fail("\(error)")
        }
        terminal.close()
        if let signal, signal != SIGINT {
            demoEnvironment?.stop()
            throw ExitCode(128 + signal)
        }
    }

    /// `--host` and what goes with it, checked before anything starts: one line and exit 2.
    private func checkRemoteOptions() throws {
        if host.isEmpty { fail("--remote-bgctl needs --host", status: 2) }
        if demo { fail("--demo and --host do not mix: the demo runs its own scheduler on this machine", status: 2) }
        if batch { fail("--batch reads this machine's state; for another's run: ssh HOST bgtop --batch", status: 2) }
        for name in host {
            if let problem = SSHLaunch.problem(with: name) { fail(problem, status: 2) }
        }
        if Set(host).count != host.count { fail("--host given twice for the same machine", status: 2) }
        if let remoteBgctl, remoteBgctl.isEmpty || remoteBgctl.contains(where: { $0.isNewline || $0 == "\0" }) {
            fail("bad --remote-bgctl: a path without newlines is needed", status: 2)
        }
    }

    private func fail(_ message: String, status: Int32 = 1) -> Never {
        // One line, nothing the terminal would act on: a message may quote a path or a file's text.
        StandardStreams.write(Data("bgtop: \(TerminalText.escaped(message))\n".utf8), to: STDERR_FILENO)
        Glibc.exit(status)
    }
}
