import ArgumentParser
import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgbench footprint`: what bgtop's programs cost a machine at rest, beside htop (issue #20, goal 4).
struct FootprintBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "footprint",
        abstract: "Idle memory of bgtaskd and bgtop, and bgctl status's start-to-exit time, beside htop.",
        discussion: """
        (1) An idle bgtaskd on an empty state folder (one app's manifest in its config), a bgtop on it and an htop, both in tmux at 160x48, \
        settle for --settle seconds; then each one's resident memory (VmRSS) and proportional share \
        (Pss, from /proc/<pid>/smaps_rollup, which splits shared libraries among their users) is read \
        at the same moment. (2) `bgctl status` on that scheduler's state and `htop --version`, each \
        started and waited for --runs times, alternately: wall time from spawn to exit. The goals \
        (issue #20) are 12 MiB for bgtaskd and bgtop and 5 ms for bgctl status. Needs tmux and htop \
        (Debian: apt-get install tmux htop). (3) Shell loops of --loop commands, one process each, \
        --loop-rounds of each, alternately: `bgctl submit` of one request again and again to that \
        scheduler, beside the sqlite3 shell inserting a row into a WAL database with \
        synchronous=FULL (the same promise: on disk when the process exits) and htop --version (a \
        process that starts and exits). The goal (issue #20) is 1 000 bgctl commands a second. \
        Needs sqlite3 (Debian: apt-get install sqlite3).
        """)

    @Option(help: "Seconds the idle programs settle before they are measured.")
    var settle = 3.0

    @Option(help: "Runs of bgctl status and of htop --version, alternately.")
    var runs = 20

    @Option(help: "Commands in each shell loop.")
    var loop = 1000

    @Option(help: "Shell loops of each program, alternately.")
    var loopRounds = 3

    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard (0.5...60).contains(settle) else { throw ValidationError("--settle must be from 0.5 to 60 seconds") }
        guard (1...1000).contains(runs) else { throw ValidationError("--runs must be from 1 to 1000") }
        guard (1...100_000).contains(loop) else { throw ValidationError("--loop must be from 1 to 100000") }
        guard (1...20).contains(loopRounds) else { throw ValidationError("--loop-rounds must be from 1 to 20") }
    }

    func measure() throws {
        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        for tool in ["tmux", "htop", "sqlite3"] where Subprocess.output("sh", ["-c", "command -v \(tool)"], scratch: workspace.root) == nil {
            throw BenchError("bgbench footprint needs \(tool) (Debian: apt-get install \(tool))")
        }
        #if DEBUG
        let build = "DEBUG build: not representative, use swift run -c release bgbench footprint"
        #else
        let build = "release build"
        #endif
        Console.line("bgbench footprint (\(build)), \(JSONFormat.string(from: Date()))")
        for line in Machine.describe(directory: workspace.root, scratch: workspace.root).lines { Console.line(line) }
        Console.line("peer:        \(Subprocess.output("htop", ["--version"], scratch: workspace.root)?.split(separator: "\n").first.map(String.init) ?? "htop")")

        // Each program runs from a fresh copy, as `bgctl install` leaves it: run as lld wrote it in
        // the build folder, the same bgtop held up to 4 MiB more code resident (docs/performance.md).
        let copies = try ProgramCopies(into: workspace.root + "/programs", [
            ("bgtaskd", try SchedulerBinary.locate()), ("bgtop", try IdleWakeups.locate("bgtop")), ("bgctl", try IdleWakeups.locate("bgctl")),
        ])
        let session = try SchedulerSession(workspace: workspace, name: "footprint", scheduler: copies.path("bgtaskd"),
                                           settings: [:], apps: [ShellLoop.app])
        defer { session.stop() }
        let memory = try IdleMemory.measure(scheduler: session, bgtop: copies.path("bgtop"), settle: settle, root: workspace.root)
        let linking = switch IdleMemory.sharesSwiftRuntime(session.pid) {
        case true?: "maps the Swift runtime as a shared library (build with --static-swift-stdlib to link it in)"
        case false?: "has the Swift runtime linked in (built with --static-swift-stdlib)"
        case nil: "has a memory map that could not be read: how the Swift runtime is linked is unknown"
        }
        // bgtop and bgctl come from the same build folder, so they are linked alike.
        Console.line("swift:       bgtaskd \(linking)")
        Console.line()
        Console.line("1. Idle memory, all three measured at the same moment after \(settle) s at rest.")
        var rows: [[String]] = [["program", "VmRSS MiB", "Pss MiB", "own code MiB", "vs htop (VmRSS)", "goal"]]
        let peer = memory.first { $0.name == "htop" }?.resident
        for entry in memory {
            rows.append([entry.name, String(format: "%.1f", Double(entry.resident) / 1024), entry.proportional.map { String(format: "%.1f", Double($0) / 1024) } ?? "-",
                         entry.ownCode.map { String(format: "%.1f", Double($0) / 1024) } ?? "-",
                         peer.map { String(format: "%.1fx", Double(entry.resident) / Double($0)) } ?? "-",
                         entry.name == "htop" ? "" : "12 MiB"])
        }
        Console.table(rows)
        switch memory.first(where: { $0.name == "bgtop" })?.mapsLibcurl {
        case true?: Console.line("   bgtop maps libcurl: Stormy's libraries, linked in by the default trait DemoExampleApp (--disable-default-traits leaves them out)")
        case false?: Console.line("   bgtop maps no libcurl (built with --disable-default-traits, or without FoundationNetworking)")
        case nil: break
        }
        Console.line("   own code: resident pages of the program's own executable code; Linker/<program>.order lays out what start-up runs together (Scripts/startup-order)")

        let bgctl = copies.path("bgctl")
        let starts = try StartToExit.compare([
            ("bgctl status", bgctl, ["status", "--state", session.paths.root, "--config", session.config]),
            ("htop --version", try StartToExit.which("htop", scratch: workspace.root), ["--version"]),
        ], runs: runs, scratch: workspace.root)
        Console.line()
        Console.line("2. Start to exit, \(runs) runs each, alternately: spawn, run, wait.")
        var startRows: [[String]] = [["program", "p50 ms", "p99 ms", "runs", "vs htop --version (p50)"]]
        let htopMedian = starts.last?.samples.median ?? 0
        for (name, samples) in starts {
            startRows.append([name, Format.milliseconds(samples.p50), Format.milliseconds(samples.p99), String(samples.count),
                              htopMedian > 0 ? String(format: "%.1fx", samples.median / htopMedian) : "-"])
        }
        Console.table(startRows)
        Console.line("   goal: bgctl status <= 5 ms")

        let loops = try ShellLoop.compare(bgctl: bgctl, session: session, commands: loop, rounds: loopRounds, root: workspace.root)
        Console.line()
        Console.line("3. Shell loops of \(loop) commands, one process each, \(loopRounds) loops of each, alternately (median loop).")
        var loopRows: [[String]] = [["loop", "commands/s", "ms per command", "vs sqlite3"]]
        // Each row beside its own kind of sqlite3 peer: a process per command, or one process.
        func sqliteRate(piped: Bool) -> Double {
            loops.first { $0.name == (piped ? "sh loop | sqlite3" : "sqlite3 insert") }.map { Double(loop) / $0.samples.median } ?? 0
        }
        for (name, samples) in loops {
            let rate = Double(loop) / samples.median
            let peer = sqliteRate(piped: name.hasPrefix("sh loop |"))
            loopRows.append([name, String(format: "%.0f", rate), Format.milliseconds(samples.median / Double(loop)),
                             peer > 0 ? String(format: "%.2fx", rate / peer) : "-"])
        }
        Console.table(loopRows)
        Console.line("   goal: bgctl >= 1000 commands/s (\"sh loop |\" rows: one process takes the loop's lines; vs the one sqlite3 shell)")
    }
}

/// Copies of the programs a benchmark runs, in a folder of its workspace.
struct ProgramCopies {
    private var paths: [String: String] = [:]

    init(into folder: String, _ programs: [(name: String, path: String)]) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for (name, path) in programs {
            let copy = "\(folder)/\(name)"
            do {
                try FileManager.default.copyItem(atPath: path, toPath: copy)
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy)
            } catch {
                throw BenchError("cannot copy \(path) to \(copy): \(error)")
            }
            paths[name] = copy
        }
    }

    /// The copy of `name`, which `init` made.
    func path(_ name: String) -> String { paths[name]! }
}
