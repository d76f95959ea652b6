import ArgumentParser
import Foundation
import LoopbackServer
import TaskState
import TortureCampaign

/// `bgbench transfer-faults`: a randomized campaign that looks for a background download ending
/// `completed` with the wrong bytes, under every misbehaviour of ``FaultCase`` and `kill -9`s of
/// the daemon, beside curl and wget on the same faults. Not a benchmark of speed: it counts
/// outcomes, and exits non-zero when bgtaskd had a wrong or stuck trial.
struct TransferFaultsBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "transfer-faults",
        abstract: "Randomized fault campaign: bgtaskd's downloads (with kill -9s) never complete with wrong bytes; curl and wget on the same faults.",
        discussion: """
        Each trial draws a fault case of the loopback server's catalogue, an entity size, a cut point and a seed.
        bgtaskd (one daemon, one state folder) gets every trial through `bgctl transfer download`, --concurrency at a
        time, and is killed with SIGKILL --kills times at random moments and started again on the same state. Then curl
        and wget play the same trials. Outcomes: exact (success, one whole acceptable representation), wrong (success,
        other bytes), failed clearly (failure with a reason, no file), stuck (neither within --stuck-after seconds).
        Exits 1 when bgtaskd had a wrong or stuck trial. See docs/reliability.md.
        """)

    @Option(help: "Trials (downloads per runner).")
    var trials = 300

    @Option(help: "SIGKILLs of bgtaskd over the campaign (default: one per 10 trials).")
    var kills: Int?

    @Option(help: "Seed of the campaign (trials, sizes, cut points, kill moments); default: a random one, printed.")
    var seed: UInt64?

    @Option(help: "Smallest entity, in bytes.")
    var sizeMin: Int64 = 64 << 10

    @Option(help: "Largest entity, in bytes.")
    var sizeMax: Int64 = 4 << 20

    @Option(help: "Downloads in flight at once, per runner (also bgtaskd's maximumConcurrentTransfers).")
    var concurrency = 8

    @Option(help: "Seconds after which an unfinished download counts as stuck.")
    var stuckAfter: Double = 60

    @Option(name: .customLong("bgtaskd"), help: "Another bgtaskd binary to run against (e.g. an older build); default: the one beside bgbench.")
    var bgtaskdPath: String?

    @Option(name: .customLong("case"), help: "Only draw this fault case (repeatable; default: all).")
    var cases: [String] = []

    @Option(help: "Play only this trial, CASE,SIZE,DROPAT,SEED as the report prints it (repeatable).")
    var replay: [String] = []

    @Flag(help: "Skip curl and wget.")
    var noPeers = false



    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard (1...100_000).contains(trials) else { throw ValidationError("--trials must be from 1 to 100000") }
        guard (kills ?? 0) >= 0 else { throw ValidationError("--kills must be 0 or more") }
        guard sizeMin >= 2, sizeMax >= sizeMin else { throw ValidationError("--size-min must be at least 2 and at most --size-max") }
        guard (1...64).contains(concurrency) else { throw ValidationError("--concurrency must be from 1 to 64") }
        guard stuckAfter > 0 else { throw ValidationError("--stuck-after must be positive") }
        for name in cases where FaultCase(rawValue: name) == nil {
            throw ValidationError("unknown --case \(name); the cases are: \(FaultCase.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        for text in replay where FaultTrial(replay: text) == nil {
            throw ValidationError("--replay takes CASE,SIZE,DROPAT,SEED with 1 <= DROPAT < SIZE, not \(text)")
        }
    }

    func measure() throws {
        let scheduler = try bgtaskdPath.map(Self.checkedBinary) ?? SchedulerBinary.locate()
        guard let control = SiblingBinary.locate("bgctl") else {
            throw BenchError("bgctl is not beside bgbench; build it there (swift build --product bgctl)")
        }
        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        let server = try LoopbackServer.startForBenchmark()
        defer { server.stopForBenchmark() }

        let seed = self.seed ?? UInt64.random(in: 0...UInt64.max)
        var generator = SplitMix64(seed: seed)
        var planGenerator = generator.split()
        var killGenerator = generator.split()
        let plan = replay.isEmpty
            ? TrialPlan.draw(count: trials, cases: cases.isEmpty ? FaultCase.allCases : cases.compactMap(FaultCase.init),
                             sizes: sizeMin...sizeMax, using: &planGenerator)
            : replay.enumerated().compactMap { index, text in FaultTrial(replay: text).map { trial in
                var numbered = trial
                numbered.number = index + 1
                return numbered
            } }
        let killCount = kills ?? plan.count / 10
        let moments = KillMoment.draw(count: killCount, trials: plan.count, concurrency: concurrency, using: &killGenerator)
        let peers: [(PeerTool.Kind, PeerTool?)] = noPeers ? [] : PeerTool.Kind.allCases.map { ($0, PeerTool.find($0, scratch: workspace.root)) }

        header(scheduler: scheduler, workspace: workspace, seed: seed, trials: plan.count, kills: killCount, peers: peers)

        Console.line()
        Console.line("1. bgtaskd: \(plan.count) downloads, \(concurrency) at a time, \(killCount) kill -9(s)")
        let started = ContinuousClock.now
        let daemon = try DaemonCampaign(workspace: workspace, scheduler: scheduler, control: control, server: server,
                                        trials: plan, kills: moments, concurrency: concurrency, stuckAfter: stuckAfter).run()
        let unmade = daemon.kills < killCount ? " (of \(killCount) drawn; one due after the last download ended is not made)" : ""
        Console.line("   done in \(Format.seconds((ContinuousClock.now - started).seconds)) s; killed \(daemon.kills) time(s)\(unmade), "
                     + "\(daemon.killsWithDownloadsInFlight) with downloads in flight; started again \(daemon.restarts) time(s)")
        for exit in daemon.unexpectedExits { Console.line("   unexpected: \(exit)") }
        Console.line("   partial data or validator files left beside ended transfers: \(daemon.leftovers.isEmpty ? "none" : daemon.leftovers.joined(separator: ", "))")

        var runners = [FaultReport.Runner(name: "bgtaskd", results: .success(daemon.results))]
        for (number, (kind, tool)) in peers.enumerated() {
            guard let tool else {
                runners.append(FaultReport.Runner(name: kind.rawValue, results: .failure(.init(reason: "not installed"))))
                continue
            }
            Console.line()
            Console.line("\(number + 2). \(kind.rawValue): the same \(plan.count) trials, \(concurrency) at a time")
            let peerStarted = ContinuousClock.now
            let results = try PeerCampaign(tool: tool, server: server, trials: plan, concurrency: concurrency,
                                           stuckAfter: stuckAfter, root: workspace.root).run()
            Console.line("   done in \(Format.seconds((ContinuousClock.now - peerStarted).seconds)) s")
            runners.append(FaultReport.Runner(name: kind.rawValue, results: .success(results)))
        }
        if noPeers {
            for kind in PeerTool.Kind.allCases {
                runners.append(FaultReport.Runner(name: kind.rawValue, results: .failure(.init(reason: "skipped (--no-peers)"))))
            }
        }

        let report = FaultReport(runners: runners)
        Console.line()
        report.printPerCase()
        Console.line()
        report.printTotals()
        report.printTroubles()
        Console.line()
        Console.line("load at end: \(Machine.loadAverage) (1, 5, 15 min)")
        if report.daemonFailures > 0 {
            Console.error("bgtaskd had \(report.daemonFailures) wrong or stuck trial(s); see above")
            throw ExitCode.failure
        }
    }

    private func header(scheduler: String, workspace: Workspace, seed: UInt64, trials: Int, kills: Int,
                        peers: [(PeerTool.Kind, PeerTool?)]) {
        let version = Subprocess.output(scheduler, ["--version"], scratch: workspace.root) ?? "?"
        #if DEBUG
        let build = "bgbench DEBUG build; use swift run -c release bgbench transfer-faults for figures to quote"
        #else
        let build = "bgbench release build"
        #endif
        Console.line("bgbench transfer-faults: bgtaskd \(version) (\(build)), \(JSONFormat.string(from: Date()))")
        for line in Machine.describe(directory: workspace.root, scratch: workspace.root).lines { Console.line(line) }
        Console.line("bgtaskd:     \(scheduler)\(bgtaskdPath == nil ? " (beside bgbench)" : " (--bgtaskd)")")
        let settings = DaemonCampaign.settings(concurrency: concurrency)
            .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        Console.line("settings:    \(settings)")
        if noPeers {
            Console.line("peers:       skipped (--no-peers)")
        }
        for (kind, tool) in peers {
            guard let tool else {
                Console.line("peer:        \(kind.rawValue) not installed")
                continue
            }
            Console.line("peer:        \(tool.version)")
            Console.line("             run as: \(tool.commandLine)")
        }
        let only = cases.isEmpty ? "all \(FaultCase.allCases.count) cases" : "cases \(cases.joined(separator: ", "))"
        Console.line("campaign:    seed \(seed), \(trials) trial(s)\(replay.isEmpty ? "" : " (--replay)"), \(kills) kill(s), "
                     + "sizes \(sizeMin)...\(sizeMax) bytes, \(only), concurrency \(concurrency), stuck after \(Format.seconds(stuckAfter)) s")
        if replay.isEmpty {
            Console.line("replay:      bgbench transfer-faults --seed \(seed) --trials \(trials) --kills \(kills) "
                         + "--size-min \(sizeMin) --size-max \(sizeMax) --concurrency \(concurrency)"
                         + cases.map { " --case \($0)" }.joined())
        }
    }

    /// An executable file given with `--bgtaskd`.
    private static func checkedBinary(_ path: String) throws -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        guard FileManager.default.isExecutableFile(atPath: absolute) else {
            throw BenchError("--bgtaskd \(path) is not an executable file")
        }
        return absolute
    }
}
