import ArgumentParser
import Foundation
import SchedulerCore
import TaskState

/// `bgbench wakeups`: wake-ups per hour of coalescing across apps beside per-app launching and
/// systemd's `AccuracySec=`, over a day of apps replayed through the real core; then the burst
/// measurement behind `maxConcurrentLaunches`' default.
struct WakeupsBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "wakeups",
        abstract: "Wake-ups per hour of coalescing across apps beside per-app launching and systemd AccuracySec, and a launch burst at several concurrencies.",
        discussion: """
        Part 1 (no processes, simulated clock, UTC): --apps apps each keep one app refresh request; after each \
        launch the handler runs 2-10 s, completes, and the app asks for its next refresh 15 min to 2 h later \
        (the first within the first 2 h), all drawn from --seed. Each policy replays --hours hours through \
        SchedulerState: per-app launching (coalescingWindowSeconds 0: each request at its own date), systemd \
        AccuracySec (each date moved to the next point of a minute grid shifted by a seed-drawn perturbation, \
        as sd-event's sleep_between does, if within --accuracy seconds), and ours (--window, \
        --max-concurrent). A wake-up is a firing of the scheduler's timer (nextWake), whether it launches \
        anything or not; 'from idle' counts those when no handler ran; a launch turn is a turn that launches \
        something (a timer's, or one where a handler's end freed a launch slot). Delay: launch time minus the date the app asked for.

        Part 2 (real processes): --burst handlers, each `sh` counting to --work, started at most C at a time for \
        each C of --concurrency, while a foreground thread sleeps 10 ms at a time: the burst's makespan and \
        how late the foreground woke (p99). See docs/performance.md.
        """)

    @Option(help: "Apps in the replay.") var apps = 20
    @Option(help: "Hours replayed.") var hours = 24.0
    @Option(help: "Seed of the apps' intervals and handler times.") var seed: UInt64 = 1
    @Option(help: "coalescingWindowSeconds of ours.") var window = SchedulerSettings().coalescingWindowSeconds
    @Option(help: "systemd's AccuracySec in seconds.") var accuracy = 60.0
    @Option(help: "maxConcurrentLaunches of ours.") var maxConcurrent = SchedulerSettings().maxConcurrentLaunches
    @Option(help: "Handlers in the burst (0: no burst).") var burst = 32
    @Option(help: "Shell loop iterations per burst handler.") var work = 100_000
    @Option(help: "Concurrencies of the burst, comma-separated.") var concurrency = "1,2,4,8,32"
    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard (1...10_000).contains(apps) else { throw ValidationError("--apps must be from 1 to 10000") }
        guard hours.isFinite, hours > 0, hours <= 24 * 28 else { throw ValidationError("--hours must be more than 0 and at most 672") }
        guard window.isFinite, (0...86_400).contains(window) else { throw ValidationError("--window must be from 0 to 86400") }
        guard accuracy.isFinite, (0...86_400).contains(accuracy) else { throw ValidationError("--accuracy must be from 0 to 86400") }
        guard (1...1024).contains(maxConcurrent) else { throw ValidationError("--max-concurrent must be from 1 to 1024") }
        guard (0...1000).contains(burst), (1...100_000_000).contains(work) else {
            throw ValidationError("--burst must be from 0 to 1000 and --work from 1 to 100000000")
        }
        guard !concurrencies.isEmpty, concurrencies.allSatisfy({ (1...1000).contains($0) }) else {
            throw ValidationError("--concurrency must list numbers from 1 to 1000, like 1,2,4")
        }
    }

    private var concurrencies: [Int] { concurrency.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) } }

    func measure() throws {
        Console.line("bgbench wakeups: \(apps) apps, \(SafeNumber.secondsText(hours)) h, seed \(seed); ours: window \(SafeNumber.secondsText(window)) s, maxConcurrentLaunches \(maxConcurrent)")
        var rows: [[String]] = [["policy", "wake-ups/h", "from idle/h", "launch turns/h", "launches", "mean delay s", "max delay s", "most running"]]
        var perHour: [WakeupPolicy: Double] = [:]
        for policy in WakeupPolicy.allCases {
            var replay = WakeupReplay(policy: policy, appCount: apps, hours: hours, seed: seed, window: window,
                                      accuracy: accuracy, maxConcurrent: maxConcurrent)
            let tally = replay.run()
            guard replay.anomalies.isEmpty else {
                throw BenchError("the core refused a command in the \(policy.rawValue) replay: \(replay.anomalies[0])")
            }
            let delays = Samples(tally.delays)
            let mean = tally.delays.isEmpty ? 0 : tally.delays.reduce(0, +) / Double(tally.delays.count)
            perHour[policy] = Double(tally.wakeups) / hours
            let name = policy == .accuracy ? "\(policy.rawValue)=\(SafeNumber.secondsText(accuracy))s" : policy.rawValue
            rows.append([name, String(format: "%.1f", Double(tally.wakeups) / hours), String(format: "%.1f", Double(tally.fromIdle) / hours),
                         String(format: "%.1f", Double(tally.launchTurns) / hours), String(tally.launches), String(format: "%.1f", mean), String(format: "%.1f", delays.maximum ?? 0),
                         String(tally.mostRunning)])
        }
        Console.table(rows)
        if let ours = perHour[.coalesced], ours > 0 {
            for peer in [WakeupPolicy.perApp, .accuracy] {
                Console.line(String(format: "ratio, wake-ups of %@ ÷ ours: %.2fx", peer.rawValue, (perHour[peer] ?? 0) / ours))
            }
        }
        guard burst > 0 else { return }
        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        #if DEBUG
        let build = "DEBUG build"
        #else
        let build = "release build"
        #endif
        Console.line()
        Console.line("burst (\(build)): \(burst) handlers of \(work) shell loop iterations each, at most C at a time; \(ProcessInfo.processInfo.activeProcessorCount) cores")
        let runner = LaunchBurst(handlers: burst, work: work, scratch: workspace.root)
        var burstRows: [[String]] = [["C", "makespan s", "foreground late p50 ms", "p99 ms", "max ms", "failed"]]
        var results: [LaunchBurst.Result] = []
        for level in concurrencies {
            let result = try runner.run(concurrency: level)
            results.append(result)
            burstRows.append([String(level), Format.seconds(result.makespan), Format.milliseconds(result.foreground.p50),
                              Format.milliseconds(result.foreground.p99), Format.milliseconds(result.foreground.maximum),
                              String(result.failures)])
        }
        Console.table(burstRows)
        if let all = results.max(by: { $0.concurrency < $1.concurrency }),
           let chosen = results.first(where: { $0.concurrency == maxConcurrent }), chosen.makespan > 0,
           let allLate = all.foreground.p99, let chosenLate = chosen.foreground.p99, chosenLate > 0 {
            Console.line(String(format: "ratio, C=%d ÷ C=%d: makespan %.2fx, foreground p99 %.2fx", all.concurrency, chosen.concurrency,
                                all.makespan / chosen.makespan, allLate / chosenLate))
        }
        Console.line("load at end: \(Machine.loadAverage) (1, 5, 15 min)")
    }
}
