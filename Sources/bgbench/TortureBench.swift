import ArgumentParser
import Foundation
import TortureCampaign

/// `bgbench torture`: the standing `kill -9` campaign of issue 11 (``TortureCampaign``) at any
/// size. It reports what it finds and exits 0 whatever it finds; the small-size end-to-end test
/// (`TortureCampaignTests`) is what fails on a finding.
struct TortureBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "torture",
        abstract: "kill -9 campaign: bgtaskd restarts under random commands lose, double or orphan nothing acknowledged.",
        discussion: """
        Runs a real bgtaskd from this build on a private state folder with two test apps (bash scripts that complete
        their tasks with `bgctl complete` after a short random time, or overrun and are killed). Each round writes random
        commands into the inbox (submit, cancel, simulate-launch, simulate-expiration, complete, set-conditions), kills
        bgtaskd with SIGKILL, writes a few more while it is down, starts it again and waits until it has applied them.
        Counts: lost (acknowledged, effect absent), doubled (applied or launched twice), unsupervised (a live process of
        the state folder that no task record names), hangs, crashes. Exits 0 whatever it finds. See docs/reliability.md.
        """)

    @Option(help: "Rounds, each ending in one kill -9 and one restart.")
    var rounds = 100

    @Option(help: "Seed of the campaign (rounds, commands, kill moments); default: a random one, printed.")
    var seed: UInt64?



    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard (1...1_000_000).contains(rounds) else { throw ValidationError("--rounds must be from 1 to 1000000") }
    }

    func measure() throws {
        let scheduler = try SchedulerBinary.locate()
        guard SiblingBinary.locate("bgctl") != nil else {
            throw BenchError("bgctl is not beside bgbench; build it there (swift build --product bgctl)")
        }
        let seed = seed ?? UInt64.random(in: 0...UInt64.max)
        #if DEBUG
        let build = "DEBUG build"
        #else
        let build = "release build"
        #endif
        Console.line("bgbench torture: \(rounds) rounds, seed \(seed) (\(build)), \(Date())")
        Console.line("replay with: bgbench torture --rounds \(rounds) --seed \(seed)")
        var campaign = TortureCampaign(rounds: rounds, seed: seed,
                                       binaries: URL(fileURLWithPath: scheduler).deletingLastPathComponent().path,
                                       parent: Workspace.parent(folder.directory))
        campaign.keep = folder.keep
        let keepFolder = folder.keep
        campaign.folderCreated = { folder in
            Interruption.register(root: keepFolder ? nil : folder)
            Interruption.register { TortureCampaign.endProcesses(folder: folder) }
        }
        let every = max(1, rounds / 20)
        campaign.progress = { line in
            if line.hasPrefix("!") || line.hasPrefix("note") { Console.line("   \(line)") }
            if line.hasPrefix("round "), let number = Int(line.dropFirst(6).prefix { $0.isNumber }), number % every == 0 {
                Console.line("   \(line)")
            }
        }
        let report: TortureReport
        do {
            report = try campaign.run()
        } catch {
            throw BenchError(error.description)
        }
        Console.line()
        Console.table(report.table)
        Console.line("  app launches: \(report.appLaunches) (\(report.unrecordedLaunches) never recorded); app completions: \(report.appCompletions) sent, "
                     + "\(report.appCompletionsAcknowledged) acknowledged")
        for finding in report.findings { Console.line("  ! \(finding)") }
        if folder.keep { Console.line("kept \(report.folder)") }
        Console.line("load at end: \(Machine.loadAverage) (1, 5, 15 min)")
    }
}
