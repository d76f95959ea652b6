import ArgumentParser
import Foundation
import TaskState

/// `bgbench`: bgtop's benchmarks. Not a test: it measures, prints a table with ratios against a
/// peer measured in the same run, and never passes or fails on a number.
@main
struct BGBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bgbench",
        abstract: "bgtop's benchmarks: the scheduler (default), the dashboard (idle and under load), background transfers, pushes, usage prediction and desktop conditions; and the torture campaign. See docs/performance.md.",
        subcommands: [SchedulerBench.self, DashboardBench.self, DashboardLoadBench.self, TransferBench.self, TransferFaultsBench.self,
                      TortureBench.self, PushBench.self, PredictionBench.self, WakeupsBench.self, ConditionsBench.self, TurnBench.self, FootprintBench.self],
        defaultSubcommand: SchedulerBench.self)
}

/// `bgbench scheduler` (the default): durable submits beside SQLite, launch latency, expiry lateness.
///
/// Run it as `swift run -c release bgbench`; it drives the real `bgtaskd` from the same build.
struct SchedulerBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "scheduler",
        abstract: "Benchmark bgtop's scheduler against SQLite (durable submits), and its launch and expiry timing.",
        discussion: """
        Phases: (1) durable submits per second, bgtop beside SQLite (WAL and DELETE, synchronous=FULL) with
        the same number of writers; (2) launch latency, earliestBeginDate to app running; (3) expiry lateness,
        deadline to SIGUSR1 received; (4) expiry lateness again while durable submits stream in
        (--streaming-submits per second), beside a bare timer thread sleeping until the same deadlines. Uses bgtaskd from bgbench's own build folder and python3's sqlite3
        module. Everything happens in a private temporary folder that is removed at the end.
        See docs/performance.md.
        """)

    @Option(help: "Durable submits per row in phase 1 (ten identifiers per app, so submits/10 apps).")
    var submits = 2000

    @Option(parsing: .upToNextOption, help: "Writer counts in phase 1, one row each (bgtop threads, SQLite processes).")
    var writers: [Int] = [1, 8]

    @Option(help: "Rounds of phase 1 (bgtop and SQLite interleaved); the report gives medians.")
    var rounds = 3

    @Option(help: "Launches measured in phase 2, and tasks expired in phase 3.")
    var launches = 40

    @Option(help: "Runtime budget of phase 3's tasks, in seconds.")
    var budget = 0.3

    @Option(help: "Seconds from submitting a request to its earliestBeginDate (phases 2 and 3).")
    var lead = 0.3

    @Option(help: "Seconds between consecutive due dates (phases 2 and 3).")
    var stagger = 0.02

    @Option(help: "Durable submits per second streamed at bgtaskd during phase 4 (phase 3 under load); 0 skips phase 4.")
    var streamingSubmits = 50.0


    @Flag(help: "Skip the bgctl-style rows in which each writer waits for its outcome.")
    var noRoundTrip = false

    @Option(help: "Clients sending at once in phase 1b (0 skips it).")
    var clients = 500

    @Option(help: "Commands each client of phase 1b sends, one after another.")
    var clientCommands = 10


    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard submits >= 1 else { throw ValidationError("--submits must be at least 1") }
        guard !writers.isEmpty, writers.allSatisfy({ (1...256).contains($0) }) else {
            throw ValidationError("--writers takes counts from 1 to 256")
        }
        guard (0...2000).contains(clients), (1...1000).contains(clientCommands) else {
            throw ValidationError("--clients must be from 0 to 2000, --client-commands from 1 to 1000")
        }
        guard (1...99).contains(rounds) else { throw ValidationError("--rounds must be from 1 to 99") }
        guard (1...999).contains(launches) else { throw ValidationError("--launches must be from 1 to 999") }
        guard streamingSubmits.isFinite, (0...1000).contains(streamingSubmits) else {
            throw ValidationError("--streaming-submits must be from 0 to 1000")
        }
        guard budget > 0, lead > 0, stagger >= 0 else {
            throw ValidationError("--budget and --lead must be positive, --stagger zero or more")
        }
    }

    func measure() throws {
        let scheduler = try SchedulerBinary.locate()
        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        let peer = SQLitePeer(workspace: workspace, rows: submits)
        try header(scheduler: scheduler, workspace: workspace, peer: peer)
        let ratios = try durableSubmits(workspace: workspace, scheduler: scheduler, peer: peer)
        try launchLatency(workspace: workspace, scheduler: scheduler)
        try expiryLateness(workspace: workspace, scheduler: scheduler)
        if streamingSubmits > 0 { try expiryUnderLoad(workspace: workspace, scheduler: scheduler) }
        Console.line()
        Console.line("Ratios, bgtop submits/s ÷ SQLite submits/s in this run (above 1: bgtop applied more per second):")
        for line in ratios { Console.line(line) }
        Console.line("load at end: \(Machine.loadAverage) (1, 5, 15 min)")
    }

    /// Phase 1; returns the ratio lines for the end of the report.
    private func durableSubmits(workspace: Workspace, scheduler: String, peer: SQLitePeer) throws -> [String] {
        Console.line()
        Console.line("1. Durable submits: \(submits) per row, each a distinct (app, identifier) processing request;")
        Console.line("   clock from releasing the writers to bgtaskd having applied all (outcomes written, journal synced).")
        Console.line("   Median of \(rounds) interleaved round(s) of bgtop and SQLite; a fresh bgtaskd and database each time.")
        let submitting = DurableSubmits(workspace: workspace, scheduler: scheduler, submits: submits)
        let ratios = try SubmitPhase(submitting: submitting, peer: peer, writers: writers, rounds: rounds,
                                     roundTrips: !noRoundTrip).run()
        if !noRoundTrip {
            Console.line("   \"wait for each outcome\" writes each command into the inbox and keeps one inotify instance per")
            Console.line("   writer; CommandChannel.send (what bgctl calls) sends it on the command socket, answered once committed.")
        }
        guard clients > 0 else { return ratios }
        Console.line()
        Console.line("1b. \(clients) clients at once, \(clientCommands) commands each, each waiting for every outcome;")
        Console.line("    the inbox path needs an inotify instance per waiting command (this user may have \(Machine.inotifyInstanceLimit)).")
        let many = ManyClients(workspace: workspace, scheduler: scheduler, clients: clients, commandsPerClient: clientCommands)
        let socket = try many.run(.socket)
        let inbox = try many.run(.inboxWithInotify)
        var table = [["path", "acknowledged", "commands/s", "p50 ms", "p99 ms", "first failure"]]
        for result in [socket, inbox] {
            table.append([result.path.rawValue, "\(result.acknowledged) of \(result.total)", Format.rate(result.throughput.perSecond),
                          Format.milliseconds(result.latencies.p50), Format.milliseconds(result.latencies.p99),
                          result.firstFailure.map { String($0.prefix(60)) } ?? "-"])
        }
        Console.table(table)
        let throughput = inbox.throughput.perSecond > 0 ? Format.ratio(socket.throughput.perSecond / inbox.throughput.perSecond) : "-"
        return ratios + ["  \(clients) clients: command socket acknowledged \(socket.acknowledged) of \(socket.total), "
                         + "the inbox path \(inbox.acknowledged) of \(inbox.total); commands/s socket ÷ inbox = \(throughput)"]
    }

    /// Phase 2.
    private func launchLatency(workspace: Workspace, scheduler: String) throws {
        Console.line()
        Console.line("2. Launch latency: \(launches) app refresh requests, one app each, coalescing off,")
        Console.line("   due \(lead) s after submission, \(stagger) s apart; earliestBeginDate -> app running.")
        let launch = try LaunchLatency(workspace: workspace, scheduler: scheduler, launches: launches,
                                       lead: lead, stagger: stagger).run()
        Console.table([
            ["", "p50 ms", "p99 ms", "max ms", "n"],
            Report.latencyRow("app (first line of its bash script)", launch.appObserved),
            Report.latencyRow("bgtaskd (time of its launched event)", launch.daemonObserved),
        ])
        warnLate(launch.lateSubmits)
    }

    /// Phase 3.
    private func expiryLateness(workspace: Workspace, scheduler: String) throws {
        Console.line()
        Console.line("3. Expiry lateness: \(launches) app refresh tasks, one app each, budget \(budget) s;")
        Console.line("   task deadline -> SIGUSR1 received.")
        let expiry = try ExpiryLateness(workspace: workspace, scheduler: scheduler, count: launches, budget: budget,
                                        lead: lead, stagger: stagger).run().observed
        Console.table([
            ["", "p50 ms", "p99 ms", "max ms", "n"],
            Report.latencyRow("app (its SIGUSR1 trap)", expiry.appObserved),
            Report.latencyRow("bgtaskd (time of its expired event)", expiry.daemonObserved),
        ])
        warnLate(expiry.lateSubmits)
        Console.line("   bgtaskd's times come from events.jsonl, which keeps milliseconds (so they are +/- 0.5 ms).")
    }

    /// Phase 4: phase 3 while durable submits stream in, beside a bare timer thread.
    private func expiryUnderLoad(workspace: Workspace, scheduler: String) throws {
        Console.line()
        Console.line("4. Expiry lateness under load: phase 3 while \(String(format: "%g", streamingSubmits)) durable submits/s stream in")
        Console.line("   (one inbox command and group commit each); peer: a bare timer thread sleeping until the same deadlines.")
        let run = try ExpiryLateness(workspace: workspace, scheduler: scheduler, count: launches, budget: budget,
                                     lead: lead, stagger: stagger, streamingRate: streamingSubmits).run()
        Console.table([
            ["", "p50 ms", "p99 ms", "max ms", "n"],
            Report.latencyRow("app (its SIGUSR1 trap)", run.observed.appObserved),
            Report.latencyRow("bgtaskd (time of its expired event)", run.observed.daemonObserved),
            Report.latencyRow("peer: bare timer thread (clock_nanosleep)", run.peer),
        ])
        warnLate(run.observed.lateSubmits)
        Console.line(String(format: "   streamed %d submits in %.1f s (%.1f/s)", run.streamed, run.seconds,
                            Double(run.streamed) / max(run.seconds, 0.001)))
        if let app = run.observed.appObserved.quantile(0.99), let peer = run.peer.quantile(0.99), peer > 0 {
            Console.line(String(format: "   ratio, app p99 ÷ bare timer p99: %.1fx (promise: app p99 <= 20 ms)", app / peer))
        }
    }

    private func header(scheduler: String, workspace: Workspace, peer: SQLitePeer) throws {
        let version = Subprocess.output(scheduler, ["--version"], scratch: workspace.root) ?? "?"
        #if DEBUG
        let build = "DEBUG build: not representative, use swift run -c release bgbench"
        #else
        let build = "release build"
        #endif
        let machine = Machine.describe(directory: workspace.root, scratch: workspace.root)
        Console.line("bgbench: bgtaskd \(version) (\(build)), \(JSONFormat.string(from: Date()))")
        for line in machine.lines { Console.line(line) }
        Console.line("peer:        \(try peer.version()), same folder")
    }

    private func warnLate(_ count: Int) {
        guard count > 0 else { return }
        Console.line("   note: \(count) request(s) reached bgtaskd only after they were due; their figures include the")
        Console.line("   submit. Use a larger --lead.")
    }
}
