import ArgumentParser
import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgbench dashboard-load`: is `bgtop` responsive and cheap while the scheduler is busy? A real
/// `bgtaskd` takes a steady stream of submits (50 a second by default) while `bgtop` watches its
/// state in a terminal this run owns; keys are sent at intervals and the time until their effect
/// reaches the screen is measured, with `bgtop`'s CPU. `htop`, under the same load in the same
/// run, with keys sent the same way, is the peer.
struct DashboardLoadBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "dashboard-load",
        abstract: "Benchmark bgtop under a stream of submits: key-to-screen latency and CPU, beside htop.",
        discussion: """
        Starts bgtaskd (from bgbench's build folder) on a private folder, streams submits into its inbox \
        at --rate, and runs bgtop and htop side by side in tmux sessions at 160x48. Every --key-interval \
        each gets a key that toggles its help screen (bgtop: ?, htop: h); the clock runs from writing the \
        key to tmux until the output that shows the effect arrives from the program's terminal. CPU is \
        utime+stime from /proc/<pid>/stat over the measured seconds. See docs/performance.md.
        """)

    @Option(help: "Submits per second streamed into the inbox.")
    var rate = 50.0

    @Option(help: "Apps the submits go to, ten identifiers each; the submits cycle over them, so the state holds apps x 10 requests.")
    var apps = 20

    @Option(help: "Seconds measured.")
    var seconds = 30.0

    @Option(help: "Seconds of load before measuring.")
    var warmUp = 5.0

    @Option(help: "Seconds between two keys to the same program.")
    var keyInterval = 0.25

    @Option(help: "Seconds a key may take to show before it counts as lost.")
    var keyTimeout = 10.0

    @Option(help: "The bgtop to measure (default: the one beside bgbench).")
    var bgtop: String?

    @Flag(help: "Do not run htop beside bgtop.")
    var noPeer = false



    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard rate > 0, rate <= 10_000 else { throw ValidationError("--rate must be above 0 and at most 10000") }
        guard (1...1000).contains(apps) else { throw ValidationError("--apps must be from 1 to 1000") }
        guard seconds > 0, warmUp >= 0 else { throw ValidationError("--seconds must be positive, --warm-up zero or more") }
        guard keyInterval >= 0.02, keyTimeout > 0 else {
            throw ValidationError("--key-interval must be at least 0.02, --key-timeout positive")
        }
    }

    func measure() throws {
        let scheduler = try SchedulerBinary.locate()
        let dashboard = try bgtop.map { path in
            guard FileManager.default.isExecutableFile(atPath: path) else { throw BenchError("--bgtop \(path) is not an executable file") }
            return path
        } ?? IdleWakeups.locate("bgtop")
        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        let peer = noPeer ? nil : Subprocess.output("sh", ["-c", "command -v htop"], scratch: workspace.root)
        header(dashboard: dashboard, workspace: workspace, peer: peer)

        let script = "\(workspace.root)/never-launched.sh"
        try workspace.writeScript(script, "#!/bin/sh\nexit 0\n")
        let benchApps = try DurableSubmits.apps(count: apps, executable: script)
        let session = try SchedulerSession(workspace: workspace, name: "load", scheduler: scheduler, settings: [:], apps: benchApps)
        defer { session.stop() }
        // Every request pending before the dashboards start: what is measured is a steady state,
        // not the first round's new folders.
        let inbox = Inbox(paths: session.paths)
        let later = Date().addingTimeInterval(30 * 86_400)
        for app in benchApps {
            for identifier in app.identifiers {
                let request = SubmitRequest(app: app.id, identifier: identifier, kind: .processing, earliestBeginDate: later)
                try inbox.enqueue(Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request)))
            }
        }
        let requests = apps * DurableSubmits.identifiersPerApp
        try waitUntil("bgtaskd to apply the first \(requests) submits", timeout: 120, interval: 0.05) { Self.outcomes(session.paths) >= requests }
        let stream = SubmitStream(paths: session.paths, apps: benchApps, rate: rate)
        defer { stream.stop() }

        let socket = "bgbench-load-\(getpid())"
        var sessions: [TerminalSession] = []
        defer { Self.end(sessions, socket: socket, scratch: workspace.root) }
        sessions.append(try TerminalSession(
            name: "bgtop", command: "exec \(dashboard) --state \(session.paths.root) --config \(session.config)",
            socket: socket, scratch: workspace.root))
        // The server goes on interruption like the scheduler: SIGTERM ends it and its panes.
        let server = IdleWakeups.tmux(socket, ["display", "-p", "#{pid}"], root: workspace.root)
        if let pid = Int32(server.output.trimmingCharacters(in: .whitespacesAndNewlines)) { Interruption.started(scheduler: pid) }
        if let peer { sessions.append(try TerminalSession(name: "htop", command: "exec \(peer)", socket: socket, scratch: workspace.root)) }
        var probes = [KeyLatencyProbe(session: sessions[0], key: "?", marker: "this help", timeout: keyTimeout)]
        if sessions.count > 1 { probes.append(KeyLatencyProbe(session: sessions[1], key: "h", marker: "Press any key to return", timeout: keyTimeout)) }

        KeySchedule.settle(probes, seconds: warmUp)
        let cpuBefore = sessions.map { ProcessCPU.seconds($0.pid) }
        let schedulerBefore = session.cpuSeconds
        let enqueuedBefore = stream.enqueued
        let appliedBefore = Self.outcomes(session.paths)
        let started = Monotonic.now()
        KeySchedule.run(probes, interval: keyInterval, seconds: seconds)
        let elapsed = Monotonic.now() - started
        let cpuAfter = sessions.map { ProcessCPU.seconds($0.pid) }
        let schedulerAfter = session.cpuSeconds
        let enqueued = stream.enqueued - enqueuedBefore
        let applied = Self.outcomes(session.paths) - appliedBefore
        stream.stop()

        Console.line()
        Console.line("Key -> screen (key written to tmux -> the terminal output showing its effect) and CPU,")
        Console.line("over \(Format.seconds(elapsed)) s of load; a key whose effect is not on screen within \(Format.seconds(keyTimeout)) s is lost:")
        var rows: [[String]] = [["program", "key", "keys", "p50 ms", "p95 ms", "p99 ms", "max ms", "lost", "CPU % of one core"]]
        var cpu: [Double?] = []
        // A lost key counts as slower than any answered one, so it shows in the quantiles.
        func latencies(_ probe: KeyLatencyProbe) -> Samples {
            Samples(probe.latencies + Array(repeating: .infinity, count: probe.timeouts))
        }
        func milliseconds(_ value: Double?, _ probe: KeyLatencyProbe) -> String {
            guard let value, !value.isFinite else { return Format.milliseconds(value) }
            return "lost (>\(Int(probe.timeout * 1000)))"
        }
        for (index, probe) in probes.enumerated() {
            let samples = latencies(probe)
            var used: Double?
            if let before = cpuBefore[index], let after = cpuAfter[index] { used = (after - before) / elapsed * 100 }
            cpu.append(used)
            rows.append([probe.session.name, probe.key, "\(samples.count)", milliseconds(samples.p50, probe),
                         milliseconds(samples.quantile(0.95), probe), milliseconds(samples.p99, probe),
                         milliseconds(samples.maximum, probe), "\(probe.timeouts)", used.map { String(format: "%.1f", $0) } ?? "exited"])
        }
        if peer == nil { rows.append(["htop", "h", "-", "-", "-", "-", "-", "-", noPeer ? "not run (--no-peer)" : "peer not installed: apt-get install htop"]) }
        Console.table(rows)
        if probes.count > 1, let ours = latencies(probes[0]).p99, let theirs = latencies(probes[1]).p99 {
            var line = "   ratio bgtop / htop: key p99 \(Format.ratio(ours / max(theirs, 1e-9)))"
            if let a = cpu[0], let b = cpu[1] { line += ", CPU \(Format.ratio(a / max(b, 1e-9)))" }
            Console.line(line)
        }
        let failed = stream.failed
        Console.line("   submits: \(enqueued) enqueued in the measured time (\(String(format: "%.1f", Double(enqueued) / elapsed))/s), "
                     + "\(applied) applied by bgtaskd, \(failed.count) failed\(failed.first.map { " (first: \($0))" } ?? "")")
        if let before = schedulerBefore, let after = schedulerAfter {
            let used = (after.user + after.system - before.user - before.system) / elapsed * 100
            Console.line("   bgtaskd CPU: \(String(format: "%.1f", used)) % of one core")
        }
        Console.line("load at end: \(Machine.loadAverage) (1, 5, 15 min)")
    }

    private func header(dashboard: String, workspace: Workspace, peer: String?) {
        #if DEBUG
        let build = "DEBUG build: not representative, use swift run -c release bgbench dashboard-load"
        #else
        let build = "release build"
        #endif
        Console.line("bgbench dashboard-load (\(build)), \(JSONFormat.string(from: Date()))")
        for line in Machine.describe(directory: workspace.root, scratch: workspace.root).lines { Console.line(line) }
        Console.line("stream:      \(Format.seconds(rate)) submits/s (Inbox.enqueue, durable) to bgtaskd from this build, cycling over the "
                     + "\(apps * DurableSubmits.identifiersPerApp) processing requests of \(apps) apps, all pending before bgtop starts")
        Console.line("keys:        every \(keyInterval) s to each program, \(Format.seconds(seconds)) s measured after "
                     + "\(Format.seconds(warmUp)) s of load; tmux 160x48, TERM=xterm-256color")
        Console.line("bgtop:       \(dashboard)")
        let version = peer.flatMap { Subprocess.output($0, ["--version"], scratch: workspace.root) }?.split(separator: "\n").first
        Console.line("peer:        \(peer == nil ? (noPeer ? "none (--no-peer)" : "htop not installed (apt-get install htop)") : String(version ?? "htop"))")
    }

    /// Outcome files: one per command the scheduler applied (nothing here reads and removes them).
    private static func outcomes(_ paths: StatePaths) -> Int {
        (try? StateFiles.names(in: paths.outcomes).count) ?? 0
    }

    /// Ends the programs, their control clients and the tmux server, and waits until the programs are gone.
    private static func end(_ sessions: [TerminalSession], socket: String, scratch: String) {
        for session in sessions { session.stop() }
        let server = IdleWakeups.tmux(socket, ["display", "-p", "#{pid}"], root: scratch)
        _ = IdleWakeups.tmux(socket, ["kill-server"], root: scratch)
        // tmux leaves its socket file behind; it names a server that no longer exists.
        let folder = ProcessInfo.processInfo.environment["TMUX_TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        unlink("\(folder)/tmux-\(getuid())/\(socket)")
        if let pid = Int32(server.output.trimmingCharacters(in: .whitespacesAndNewlines)) { Interruption.stopped(scheduler: pid) }
        for session in sessions {
            for _ in 0..<100 where kill(session.pid, 0) == 0 { usleep(20_000) }
            if kill(session.pid, 0) == 0 { kill(session.pid, SIGKILL) }
        }
    }
}
