import Foundation
import TaskState

/// Phase 2 of ``TurnBench``: the same state in a real `bgtaskd` (its files written before it
/// starts, loaded as at any start), and commands sent one after another as `bgctl` sends them
/// (`CommandChannel.send` over the command socket): the round trip and the scheduler's CPU time
/// per command, commit included.
enum DaemonTurnTiming {
    struct Result {
        var roundTrips: Samples
        /// bgtaskd's CPU milliseconds per command, user and kernel.
        var cpuPerCommand: (user: Double, system: Double)
    }

    static func measure(pending: Int, transfers: Int, turns: Int, workspace: Workspace) throws -> Result {
        let now = Date()
        let parts = SyntheticPolicyState.build(pending: pending, transfers: transfers, now: now)
        let apps = parts.manifests.values.sorted { $0.id < $1.id }.map { manifest in
            BenchApp(id: manifest.id, identifiers: manifest.permittedIdentifiers, modes: ["fetch", "processing"], executable: "/bin/true")
        }
        let session = try SchedulerSession(workspace: workspace, name: "turn-\(pending)", scheduler: try SchedulerBinary.locate(),
                                           settings: [:], apps: apps, startTimeout: 600) { paths in
            for directory in paths.directories { try StateFiles.ensureDirectory(directory) }
            var folders: Set<String> = []
            func write<T: Encodable>(_ value: T, _ path: String) throws {
                let folder = StateFiles.directoryName(of: path)
                if folders.insert(folder).inserted { try StateFiles.ensureDirectory(folder) }
                try StateFiles.write(try JSONFormat.encode(value), to: path, durable: false)
            }
            for request in parts.snapshot.requests { try write(request, paths.request(request.key)) }
            for transfer in parts.snapshot.transfers { try write(transfer, paths.transfer(transfer.key)) }
            try write(parts.conditions, paths.conditions)
        }
        defer { session.stop() }
        let channel = CommandChannel(paths: session.paths)
        var samples: [Double] = []
        let before = session.cpuSeconds
        for turn in 0..<turns {
            let action = SyntheticPolicyState.turnAction(turn, start: now)
            let begin = DispatchTime.now().uptimeNanoseconds
            guard case .applied(let outcome) = try channel.send(Command(issuedAt: Date(), action: action), timeout: 60) else {
                throw BenchError("no answer to turn \(turn) at \(pending) pending within 60 s: \(session.log)")
            }
            samples.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            guard outcome.succeeded else { throw BenchError("turn \(turn) at \(pending) pending refused: \(outcome.error?.message ?? "")") }
        }
        let after = session.cpuSeconds
        let cpu = (before, after)
        guard let start = cpu.0, let end = cpu.1 else { throw BenchError("bgtaskd stopped during the turns: \(session.log)") }
        return Result(roundTrips: Samples(samples),
                      cpuPerCommand: ((end.user - start.user) * 1000 / Double(turns), (end.system - start.system) * 1000 / Double(turns)))
    }
}
