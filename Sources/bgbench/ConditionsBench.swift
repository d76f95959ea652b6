import ArgumentParser
import Foundation

/// `bgbench conditions`: how fast a desktop service's change reaches the scheduler, beside a
/// plain client of the same bus (`dbus-monitor`) in the same run.
struct ConditionsBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "conditions",
        abstract: "Benchmark desktop conditions: a D-Bus service's property change -> bgtaskd's conditions.json, beside dbus-monitor.",
        discussion: """
        Starts a private system-like dbus-daemon with python-dbusmock's upower, power_profiles_daemon, networkmanager \
        and logind templates, bgtaskd told its address (conditionsRecheckSeconds 3600, so nothing but the signals \
        moves it), and dbus-monitor on the same bus. Each change (UPower OnBattery, power-profiles-daemon \
        ActiveProfile, NetworkManager Metered, the logind session's IdleHint, back and forth) is timed from just \
        before busctl sets the property: to dbus-monitor printing its PropertiesChanged (the peer), and to \
        conditions.json showing the new value. Needs dbus-daemon, dbus-monitor, busctl and python3-dbusmock. \
        Uses bgtaskd from bgbench's own build folder. See docs/performance.md.
        """)

    @Option(help: "Property changes measured, cycling through the four services.") var changes = 40
    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard (1...999).contains(changes) else { throw ValidationError("--changes must be from 1 to 999") }
    }

    func measure() throws {
        let scheduler = try SchedulerBinary.locate()
        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        let tools = try DesktopTools.locate(scratch: workspace.root)
        #if DEBUG
        let build = "DEBUG build: not representative, use swift run -c release bgbench conditions"
        #else
        let build = "release build"
        #endif
        Console.line("bgbench conditions: bgtaskd (\(build)), \(changes) property changes on a private system bus, python-dbusmock services")
        for line in Machine.describe(directory: workspace.root, scratch: workspace.root).lines { Console.line(line) }
        let timings = try ConditionsLatency(workspace: workspace, scheduler: scheduler, tools: tools, changes: changes).run()
        let peer = Samples(timings.peer)
        let daemon = Samples(timings.scheduler)
        Console.line()
        Console.table([
            ["busctl Set -> change seen", "p50 ms", "p99 ms", "max ms", "n"],
            Report.latencyRow("peer: dbus-monitor prints the PropertiesChanged", peer),
            Report.latencyRow("bgtaskd: conditions.json shows the new value", daemon),
            Report.latencyRow("bgtaskd's own share (conditions.json - dbus-monitor)", Samples(timings.share.map { $0.seconds })),
        ])
        Console.line()
        var rows = [["bgtaskd's own share, by service", "p50 ms", "p99 ms", "max ms", "n"]]
        for service in ["UPower", "power-profiles-daemon", "NetworkManager", "logind"] {
            let samples = Samples(timings.share.filter { $0.service == service }.map { $0.seconds })
            if samples.count > 0 { rows.append(Report.latencyRow(service, samples)) }
        }
        Console.table(rows)
        if let ours = daemon.p50, let theirs = peer.p50, theirs > 0 {
            Console.line("ratio, bgtaskd p50 ÷ dbus-monitor p50: \(Format.ratio(ours / theirs))")
        }
        if let ours = daemon.p99, let theirs = peer.p99, theirs > 0 {
            Console.line("ratio, bgtaskd p99 ÷ dbus-monitor p99: \(Format.ratio(ours / theirs)) (issue #19's floor: within 100 ms of the signal)")
        }
        Console.line("load at end: \(Machine.loadAverage) (1, 5, 15 min)")
    }
}
