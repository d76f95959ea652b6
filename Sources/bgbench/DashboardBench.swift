import ArgumentParser
import Dashboard
import Foundation
import SchedulerCore
import TaskState
import TestSupport

/// `bgbench dashboard`: the dashboard's costs. Frame time at 160×48 for 10, 10 000 and 100 000
/// pending requests, and of the first frame after one change at each size; the time to load a 10 000-request state directory; the log overlay's open
/// time on a 1 GiB log beside `tail`; wake-ups of an idle `bgtop` over 30 s beside an idle `htop`
/// in the same run; the timeline's frame time over 10 000 events beside the main screen's over
/// the same events.
struct DashboardBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dashboard",
        abstract: "Benchmark bgtop: frame time, state loading, the log overlay on a 1 GiB log beside tail, idle wake-ups beside htop, the timeline's frame time.")

    @Option(parsing: .upToNextOption, help: "Pending-request counts for the frame-time rows.")
    var pending: [Int] = [10, 10_000, 100_000]

    @Option(help: "Frames measured per row (each a key press and a full render).")
    var frames = 200

    @Option(help: "Changes measured per row of the first frame after one change.")
    var changes = 60

    @Option(help: "Changes of conditions measured per row of the first frame after one change.")
    var conditionChanges = 10

    @Option(help: "Requests in the state directory for the load-time row.")
    var loadRequests = 10_000

    @Option(help: "Events in the log for the timeline rows.")
    var timelineEvents = 10_000

    @Option(help: "Seconds of idle to count wake-ups over.")
    var idleSeconds = 30.0

    @Option(help: "Opens of the log overlay (and runs of tail) on the 1 GiB log.")
    var logRuns = 20

    @Flag(help: "Skip the idle wake-up comparison (needs tmux, and htop for the peer).")
    var noIdle = false

    @Option(help: "Submits timed for the bgtop --host row.")
    var remoteSubmits = 20

    @Flag(help: "Skip the bgtop --host comparison (needs tmux and openssh-server).")
    var noRemote = false

    func run() throws {
        #if DEBUG
        let build = "DEBUG build: not representative, use swift run -c release bgbench dashboard"
        #else
        let build = "release build"
        #endif
        let root = FileManager.default.temporaryDirectory.path + "/bgbench-dashboard-\(getpid())"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: root) }
        Console.line("bgbench dashboard (\(build)), \(JSONFormat.string(from: Date()))")
        for line in Machine.describe(directory: root, scratch: root).lines { Console.line(line) }

        Console.line()
        Console.line("1. Frame time at 160x48: a key press (Down) and a full render into cells, per frame.")
        Console.line("   First frame includes filtering and sorting every row; later frames reuse them.")
        var rows: [[String]] = [["pending", "first frame ms", "p50 ms", "p99 ms", "frames"]]
        var p50s: [Int: Double] = [:]
        for count in pending {
            let result = FrameTiming.measure(pending: count, frames: frames)
            p50s[count] = result.frames.p50
            rows.append(["\(count)", Format.milliseconds(result.first), Format.milliseconds(result.frames.p50),
                         Format.milliseconds(result.frames.p99), "\(result.frames.count)"])
        }
        Console.table(rows)
        if let small = pending.min().flatMap({ p50s[$0] }), let large = pending.max().flatMap({ p50s[$0] }), small > 0 {
            Console.line("   ratio p50(\(pending.max()!)) / p50(\(pending.min()!)): \(String(format: "%.2f", large / small))")
        }

        Console.line()
        Console.line("   First frame after one change, per change: a request's file rewritten with a new date, added or")
        Console.line("   removed (in turn), its report read by the state mirror, the waits and sorted rows it touches")
        Console.line("   updated, the rest of the snapshot, and a full render at 160x48 (all in process; budget 16 ms);")
        Console.line("   then a change of conditions (mains power coming and going: a fifth of the rows read differently).")
        var changeRows: [[String]] = [["pending", "change", "p50 ms", "p99 ms", "changes"]]
        var changeP50s: [Int: Double] = [:], changeP99s: [Int: Double] = [:]
        for count in pending {
            let folder = root + "/change-\(count)"
            let result = try ChangeFrameTiming.measure(pending: count, changes: changes, conditionChanges: conditionChanges, root: folder)
            try? FileManager.default.removeItem(atPath: folder)
            changeP50s[count] = result.requests.p50
            changeP99s[count] = result.requests.p99
            changeRows.append(["\(count)", "one request", Format.milliseconds(result.requests.p50), Format.milliseconds(result.requests.p99),
                               "\(result.requests.count)"])
            changeRows.append(["\(count)", "conditions", Format.milliseconds(result.conditions.p50), Format.milliseconds(result.conditions.p99),
                               "\(result.conditions.count)"])
        }
        Console.table(changeRows)
        if let smallest = pending.min(), let largest = pending.max(), let small = changeP50s[smallest], let large = changeP50s[largest],
           let worst = changeP99s[largest], small > 0 {
            Console.line("   ratio p50(\(largest)) / p50(\(smallest)): \(String(format: "%.2f", large / small)); "
                         + "p99 at \(largest): \(Format.milliseconds(worst)) ms, \(worst <= 0.016 ? "within" : "over") the 16 ms budget")
        }

        Console.line()
        Console.line("2. Loading a state directory of \(loadRequests) pending requests (read, decode, blockers),")
        Console.line("   beside reading the same files' bytes with no decoding (the floor), in the same run.")
        let load = try StateLoadTiming.measure(requests: loadRequests, root: root + "/load")
        Console.table([
            ["reader", "ms (median of 5)"],
            ["bgtop's snapshot load", Format.milliseconds(load.snapshot)],
            ["raw reads of every file", Format.milliseconds(load.cat)],
        ])
        Console.line("   ratio bgtop / raw reads: \(String(format: "%.2f", load.snapshot / max(load.cat, 1e-9)))")

        Console.line()
        Console.line("3. Log overlay open time on a 1 GiB log: o to a drawn pager (read the last \(LogPager.chunkLines) lines by")
        Console.line("   seeking from the end, place them, render at 160x48), in process, beside tail -n \(LogPager.chunkLines) of the")
        Console.line("   same file (a process started and waited for), alternately, in the same run.")
        let log = try LogOverlayTiming.measure(root: root + "/log", runs: logRuns)
        Console.table([
            ["reader", "p50 ms", "p99 ms", "runs"],
            ["bgtop's log overlay", Format.milliseconds(log.pager.median), Format.milliseconds(log.pager.quantile(0.99)), "\(log.pager.count)"],
            ["tail -n \(LogPager.chunkLines)", Format.milliseconds(log.tail.median), Format.milliseconds(log.tail.quantile(0.99)), "\(log.tail.count)"],
        ])
        Console.line("   ratio overlay / tail (p50): \(String(format: "%.2f", log.pager.median / max(log.tail.median, 1e-9)))")

        if !noIdle {
            Console.line()
            Console.line("4. Idle wake-ups over \(Int(idleSeconds)) s (context switches of every thread, /proc/<pid>/task/*/status),")
            Console.line("   bgtop on an idle state directory beside htop, both in tmux at 160x48, measured at the same time.")
            let idle = try IdleWakeups.measure(seconds: idleSeconds, root: root + "/idle")
            var idleRows: [[String]] = [["program", "wake-ups", "per second"]]
            for entry in idle {
                idleRows.append([entry.name, entry.wakeups.map(String.init) ?? "-",
                                 entry.wakeups.map { String(format: "%.2f", Double($0) / idleSeconds) } ?? entry.note])
            }
            Console.table(idleRows)
            if let bgtop = idle.first(where: { $0.name == "bgtop" })?.wakeups, let htop = idle.first(where: { $0.name == "htop" })?.wakeups {
                Console.line("   ratio bgtop / htop: \(String(format: "%.3f", Double(bgtop) / Double(max(htop, 1))))")
            }
        }

        Console.line()
        Console.line("5. Timeline frame time at 160x48 over \(timelineEvents) events (24 h, 30 apps): a key (Left/Right)")
        Console.line("   and a full render, beside the main screen's frame (events panel, Down) over the same events.")
        let timeline = try TimelineFrameTiming.measure(events: timelineEvents, frames: frames)
        Console.line("   history built from the log's lines in \(Format.milliseconds(timeline.build)) ms "
            + "(\(String(format: "%.2f", timeline.build / Double(max(1, timeline.events)) * 1e6)) µs an event), \(timeline.runs) runs")
        var timelineRows: [[String]] = [["view", "p50 ms", "p99 ms", "frames"]]
        for (span, samples) in timeline.timeline {
            timelineRows.append(["timeline, \(span) window", Format.milliseconds(samples.p50), Format.milliseconds(samples.p99), "\(samples.count)"])
        }
        timelineRows.append(["main screen, events panel", Format.milliseconds(timeline.mainScreen.p50),
                             Format.milliseconds(timeline.mainScreen.p99), "\(timeline.mainScreen.count)"])
        Console.table(timelineRows)
        if let main = timeline.mainScreen.p50, main > 0 {
            for (span, samples) in timeline.timeline {
                guard let p50 = samples.p50 else { continue }
                Console.line("   ratio p50 timeline (\(span)) / main screen: \(String(format: "%.2f", p50 / main))")
            }
        }

        if !noRemote { try remoteRow(root: root) }
    }

    /// 4. `bgtop --host` over loopback ssh beside a local `bgtop`.
    private func remoteRow(root: String) throws {
        Console.line()
        Console.line("6. bgtop --host over loopback ssh: from a submit (bgctl starting) to the request on screen,")
        Console.line("   beside a local bgtop on the same state directory, both in tmux at 160x48, in the same run.")
        guard LoopbackSSHServer.isInstalled else {
            Console.line("   skipped: /usr/sbin/sshd, ssh or ssh-keygen is not installed (apt-get install openssh-server)")
            return
        }
        let result = try RemoteLatency.measure(submits: remoteSubmits, root: root + "/remote")
        let local = Samples(result.local), remote = Samples(result.remote)
        Console.table([
            ["dashboard", "p50 ms", "p99 ms", "submits"],
            ["bgtop (local files)", Format.milliseconds(local.p50), Format.milliseconds(local.p99), "\(local.count)"],
            ["bgtop --host (ssh)", Format.milliseconds(remote.p50), Format.milliseconds(remote.p99), "\(remote.count)"],
        ])
        if let remoteP50 = remote.p50, let localP50 = local.p50 {
            Console.line("   ratio p50 remote / local: \(String(format: "%.2f", remoteP50 / max(localP50, 1e-9)))")
        }
    }
}
