import ArgumentParser
import Foundation
import LoopbackServer

/// `bgbench push`: push -> handler running, beside the launch latency of a due refresh in the
/// same run (the peer: what the same scheduler does for its own timer).
struct PushBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "push",
        abstract: "Benchmark background pushes: push sent -> the app's handler running, beside a due refresh's launch latency.",
        discussion: """
        Each row sends one push to each of --count stopped apps, one after another (the launch path: bgtaskd starts the
        app); the time is from sending to the first line of the app's bash script. Rows: `bgctl push` (a process per
        push), a push command written straight into the inbox, a message published on a loopback ntfy server the app's
        manifest subscribes to, and the peer: app refresh requests coming due, from
        earliestBeginDate to the app running. Uses bgtaskd and bgctl from bgbench's own build folder. See docs/performance.md.
        """)

    @Option(help: "Pushes per row (one app each).") var count = 40
    @Option(help: "Seconds from submitting a peer request to its earliestBeginDate.") var lead = 0.3
    @Option(help: "Seconds between consecutive peer due dates.") var stagger = 0.05
    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard (1...999).contains(count) else { throw ValidationError("--count must be from 1 to 999") }
        guard lead > 0, stagger >= 0 else { throw ValidationError("--lead must be positive, --stagger zero or more") }
    }

    func measure() throws {
        let scheduler = try SchedulerBinary.locate()
        let bgctl = ProgramFolder.sibling(of: scheduler, named: "bgctl")
        guard FileManager.default.isExecutableFile(atPath: bgctl) else {
            throw BenchError("bgctl is not beside bgtaskd in \(ProgramFolder.parent(of: scheduler)); run: swift run -c release bgbench push")
        }
        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        #if DEBUG
        let build = "DEBUG build: not representative, use swift run -c release bgbench push"
        #else
        let build = "release build"
        #endif
        Console.line("bgbench push: bgtaskd (\(build)), \(count) pushes per row, one stopped app each")
        for line in Machine.describe(directory: workspace.root, scratch: workspace.root).lines { Console.line(line) }
        let latency = PushLatency(workspace: workspace, scheduler: scheduler, count: count)
        let viaBgctl = try latency.run(.bgctl(bgctl), name: "bgctl")
        let viaInbox = try latency.run(.inbox, name: "inbox")
        let server = try blockingAwait { try await PushTopicServer.start() }
        let viaStream = try latency.run(.stream(server), name: "stream")
        try? blockingAwait { await server.stop() }
        let peer = try LaunchLatency(workspace: workspace, scheduler: scheduler, launches: count, lead: lead, stagger: stagger).run()
        Console.line()
        Console.table([
            ["push sent -> app running", "p50 ms", "p99 ms", "max ms", "n"],
            Report.latencyRow("bgctl push (process start included)", viaBgctl),
            Report.latencyRow("push command into the inbox", viaInbox),
            Report.latencyRow("ntfy message on a loopback push server", viaStream),
            Report.latencyRow("peer: due app refresh, earliestBeginDate -> app", peer.appObserved),
        ])
        if let push = viaInbox.quantile(0.5), let due = peer.appObserved.quantile(0.5), due > 0 {
            Console.line(String(format: "ratio, inbox push p50 ÷ due refresh p50: %.2fx", push / due))
        }
        if let push = viaBgctl.quantile(0.5), let due = peer.appObserved.quantile(0.5), due > 0 {
            Console.line(String(format: "ratio, bgctl push p50 ÷ due refresh p50: %.2fx", push / due))
        }
        if let push = viaStream.quantile(0.5), let due = peer.appObserved.quantile(0.5), due > 0 {
            Console.line(String(format: "ratio, push server p50 ÷ due refresh p50: %.2fx", push / due))
        }
        Console.line("load at end: \(Machine.loadAverage) (1, 5, 15 min)")
    }
}

/// Paths beside a program.
enum ProgramFolder {
    static func parent(of path: String) -> String { URL(fileURLWithPath: path).deletingLastPathComponent().path }
    static func sibling(of path: String, named name: String) -> String { parent(of: path) + "/" + name }
}
