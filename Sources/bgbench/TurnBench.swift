import ArgumentParser
import Foundation
import SchedulerCore
import TaskState

/// `bgbench turn`: what one scheduler turn costs the policy as the state grows (issue #20, goal 3).
struct TurnBench: InterruptibleBench {
    static let configuration = CommandConfiguration(
        commandName: "turn",
        abstract: "The policy's cost of one scheduler turn at 10 to 100 000 pending requests, beside the smallest state.",
        discussion: """
        Each row builds a scheduler's state in memory (SyntheticPolicyState: per app one app refresh due \
        later today and nine processing requests, undated ones waiting for an idle machine, dated ones \
        needing the network; waiting transfers, dated or backing off) and times the turns a single \
        command causes in bgtaskd: the command applied, what time decides (effectsOfTime) and when to \
        wake next (wakePlan), then the changes taken for the commit. Turns alternate a submit and a \
        cancel of one request, so the state keeps its size. No files are written in phase 1. Phase 1b \
        does the same with every dated request due within one coalescing window (a burst all due \
        within the same minutes), where the turn must find the coalesced group's end without walking it. Phase 2 puts \
        the same states in a real bgtaskd (files written before it starts, with manifests for every app) \
        and sends the same commands as bgctl does (CommandChannel.send over the command socket): round \
        trip and bgtaskd's CPU per command, commit included. The ratio is each row's median over the \
        first row's, measured in the same run.
        """)

    @Option(parsing: .upToNextOption, help: "Pending requests per row.")
    var pending: [Int] = [10, 1_000, 10_000, 100_000]

    @Option(parsing: .upToNextOption, help: "Transfers per row (one per row of --pending; the last repeats).")
    var transfers: [Int] = [1, 10, 100, 1_000]

    @Option(parsing: .upToNextOption, help: "Pending requests per row of phase 1b (every dated request due within one coalescing window).")
    var windowPending: [Int] = [10, 100_000]

    @Option(help: "Turns measured per row.")
    var turns = 400

    @Option(parsing: .upToNextOption, help: "Pending requests per row of phase 2 (a real bgtaskd).")
    var daemonPending: [Int] = [10, 100_000]

    @Option(parsing: .upToNextOption, help: "Transfers per row of phase 2 (the last repeats).")
    var daemonTransfers: [Int] = [1, 1_000]

    @Option(help: "Commands sent per row of phase 2; 0 skips it.")
    var daemonTurns = 200

    @OptionGroup var folder: FolderOptions

    func validate() throws {
        guard !pending.isEmpty, pending.allSatisfy({ (1...1_000_000).contains($0) }) else {
            throw ValidationError("--pending must be from 1 to 1000000")
        }
        guard !transfers.isEmpty, transfers.allSatisfy({ (0...100_000).contains($0) }) else {
            throw ValidationError("--transfers must be from 0 to 100000")
        }
        guard windowPending.allSatisfy({ (1...1_000_000).contains($0) }) else {
            throw ValidationError("--window-pending must be from 1 to 1000000")
        }
        guard (2...100_000).contains(turns) else { throw ValidationError("--turns must be from 2 to 100000") }
        guard !daemonPending.isEmpty, daemonPending.allSatisfy({ (1...1_000_000).contains($0) }),
              !daemonTransfers.isEmpty, daemonTransfers.allSatisfy({ (0...100_000).contains($0) }) else {
            throw ValidationError("--daemon-pending must be from 1 to 1000000 and --daemon-transfers from 0 to 100000")
        }
        guard daemonTurns == 0 || (2...100_000).contains(daemonTurns) else { throw ValidationError("--daemon-turns must be 0 or from 2 to 100000") }
    }

    func measure() throws {
        #if DEBUG
        let build = "DEBUG build: not representative, use swift run -c release bgbench turn"
        #else
        let build = "release build"
        #endif
        Console.line("bgbench turn (\(build)), \(JSONFormat.string(from: Date()))")
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
        Console.line("load:        \(load) (1, 5, 15 min) at start")
        Console.line("1. One turn of the policy per command (apply, effectsOfTime, wakePlan, takeChanges), in memory.")
        let rows = try Self.policyRows(pending, transfers: transfers, turns: turns, spread: 86_400)
        Console.table(rows)
        if !windowPending.isEmpty {
            // A burst all due within the same minutes: the coalesced turn holds every dated request, and
            // finding its end must not mean walking all of them at every turn.
            Console.line()
            Console.line("1b. The same, every dated request due within one coalescing window (\(Int(SchedulerSettings().coalescingWindowSeconds)) s).")
            Console.table(try Self.policyRows(windowPending, transfers: [transfers[0], transfers[transfers.count - 1]], turns: turns, spread: 300))
        }
        guard daemonTurns > 0 else { return }

        let workspace = try folder.makeWorkspace()
        defer { folder.finish(workspace) }
        Console.line()
        Console.line("2. The same states in a real bgtaskd: a command sent as bgctl sends it (CommandChannel.send), one after another.")
        var daemonRows: [[String]] = [["pending", "transfers", "round trip p50 ms", "p99 ms", "bgtaskd CPU/command ms", "commands", "vs first row (p50)"]]
        var firstDaemon: Double?
        for (index, count) in daemonPending.enumerated() {
            let transferCount = daemonTransfers[min(index, daemonTransfers.count - 1)]
            let result = try DaemonTurnTiming.measure(pending: count, transfers: transferCount, turns: daemonTurns, workspace: workspace)
            let base = firstDaemon ?? result.roundTrips.median
            firstDaemon = base
            daemonRows.append([String(count), String(transferCount), String(format: "%.2f", result.roundTrips.median * 1000),
                               String(format: "%.2f", (result.roundTrips.p99 ?? 0) * 1000),
                               String(format: "%.2f user + %.2f kernel", result.cpuPerCommand.user, result.cpuPerCommand.system),
                               String(result.roundTrips.count), String(format: "%.2fx", result.roundTrips.median / base)])
        }
        Console.table(daemonRows)
    }
}

extension TurnBench {
    /// Phase 1's table: one row per count of `pending` (with the transfers of the same row, the
    /// last repeating), each row's median beside the first row's.
    static func policyRows(_ pending: [Int], transfers: [Int], turns: Int, spread: Double) throws -> [[String]] {
        var rows: [[String]] = [["pending", "transfers", "p50 µs", "p99 µs", "turns", "vs first row (p50)"]]
        var first: Double?
        for (index, count) in pending.enumerated() {
            let transferCount = transfers[min(index, transfers.count - 1)]
            let samples = try PolicyTurnTiming.measure(pending: count, transfers: transferCount, turns: turns, spread: spread)
            let base = first ?? samples.median
            first = base
            rows.append([String(count), String(transferCount), String(format: "%.1f", samples.median * 1e6),
                         String(format: "%.1f", (samples.p99 ?? 0) * 1e6), String(samples.count),
                         String(format: "%.2fx", samples.median / base)])
        }
        return rows
    }
}

/// Times the turns of ``TurnBench``.
enum PolicyTurnTiming {
    static func measure(pending: Int, transfers: Int, turns: Int, spread: Double = 86_400) throws -> Samples {
        let start = Date()
        var state = SyntheticPolicyState.make(pending: pending, transfers: transfers, now: start, spread: spread)
        _ = state.takeChanges()
        var samples: [Double] = []
        samples.reserveCapacity(turns)
        for turn in 0..<turns {
            let now = start.addingTimeInterval(Double(turn) * 0.001)
            let action = SyntheticPolicyState.turnAction(turn, start: start)
            let begin = DispatchTime.now().uptimeNanoseconds
            let result = state.apply(Command(issuedAt: now, action: action), now: now)
            let effects = state.effectsOfTime(at: now)
            let plan = state.wakePlan(after: now)
            let changes = state.takeChanges()
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            guard result.outcome.succeeded, effects.isEmpty, plan.nextWake != nil, !changes.requests.isEmpty else {
                throw BenchError("turn \(turn) at \(pending) pending: \(result.outcome.error?.message ?? "\(effects.count) effects, wake \(String(describing: plan.nextWake))")")
            }
        }
        return Samples(samples)
    }
}
