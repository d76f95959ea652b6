import Foundation
import LoopbackServer
import TaskState
import TortureCampaign
#if canImport(Glibc)
import Glibc
#endif

/// A moment at which the campaign kills `bgtaskd` with SIGKILL: `delay` seconds after handing
/// over trial `afterTrial` (0-based), started again `downtime` seconds after the kill.
struct KillMoment: Sendable {
    var afterTrial: Int
    var delay: Double
    var downtime: Double

    /// `count` moments, spread over the trials that still have others in flight after them (a kill
    /// after the last handover may find nothing running).
    static func draw(count: Int, trials: Int, concurrency: Int, using generator: inout SplitMix64) -> [KillMoment] {
        guard count > 0, trials > 0 else { return [] }
        let last = max(1, trials - concurrency)
        return (0..<count).map { _ in
            KillMoment(afterTrial: Int.random(in: 0..<last, using: &generator),
                       delay: Double.random(in: 0..<1.5, using: &generator),
                       downtime: Double.random(in: 0.1..<1.0, using: &generator))
        }.sorted { ($0.afterTrial, $0.delay) < ($1.afterTrial, $1.delay) }
    }
}

/// The `bgtaskd` side of `transfer-faults`: every trial handed over with `bgctl transfer download`
/// to one daemon on one state folder, `concurrency` at a time, while the daemon is killed and
/// started again at the drawn moments; each trial classified from its record and its file.
struct DaemonCampaign {
    let workspace: Workspace
    let scheduler: String
    let control: String
    let server: LoopbackServer
    let trials: [FaultTrial]
    let kills: [KillMoment]
    let concurrency: Int
    let stuckAfter: Double

    static let appName = "bench.faults"
    /// The settings the daemon runs with; printed in the report's header.
    static func settings(concurrency: Int) -> [String: Any] {
        [
            // Retries come quickly (as in the end-to-end tests) and never wait long enough to
            // look stuck; the backoff's shape is not what this campaign measures.
            "transferRetryInitialSeconds": 0.2, "transferRetryMaximumSeconds": 4,
            "maximumConcurrentTransfers": concurrency,
            // Records of finished transfers stay until the campaign has read them.
            "finishedTransferRetentionSeconds": 86_400,
        ]
    }

    /// What the campaign saw besides the trials.
    struct Summary {
        var results: [TrialResult]
        var kills: Int
        /// Kills made while at least one handed-over download had not ended.
        var killsWithDownloadsInFlight: Int
        var restarts: Int
        var unexpectedExits: [String]
        /// Partial data or validator files left beside trials that ended.
        var leftovers: [String]
    }

    /// A trial handed over and not yet classified.
    private struct InFlight {
        var trial: FaultTrial
        var key: TaskKey
        var file: String
        var started: ContinuousClock.Instant
        /// `bgctl`, until it has returned.
        var handover: BackgroundCommand?
    }

    func run() throws -> Summary {
        let app = try Identifier(validating: Self.appName)
        let session = try SchedulerSession(
            workspace: workspace, name: "faults", scheduler: scheduler, settings: Self.settings(concurrency: concurrency),
            apps: [BenchApp(id: app, identifiers: [try Identifier(validating: "\(Self.appName).refresh")], modes: [],
                            executable: "/bin/true")])
        let daemon: KillableScheduler
        do {
            daemon = try KillableScheduler(session: session, scheduler: scheduler)
        } catch {
            session.stop()
            throw error
        }
        defer { daemon.stop() }
        let paths = session.paths

        var results: [TrialResult] = []
        var inFlight: [InFlight] = []
        var next = 0
        var moments = kills[...]
        var dueKills: [(at: ContinuousClock.Instant, downtime: Double)] = []
        var restartAt: ContinuousClock.Instant?
        var lastProgress = ContinuousClock.now
        var killsWithDownloadsInFlight = 0

        while results.count < trials.count {
            let now = ContinuousClock.now
            // The daemon: notice a death nobody caused, start it again when its downtime is over,
            // kill it when a kill is due.
            if daemon.noticeUnexpectedExit() {
                Console.line("   ! \(daemon.unexpectedExits.last ?? "bgtaskd exited"); starting it again")
                restartAt = now + .milliseconds(200)
            }
            if daemon.isDown, let at = restartAt, now >= at {
                try daemon.start()
                restartAt = nil
            }
            if !daemon.isDown, let due = dueKills.first, now >= due.at {
                dueKills.removeFirst()
                try daemon.killHard()
                if !inFlight.isEmpty { killsWithDownloadsInFlight += 1 }
                restartAt = now + .milliseconds(Int64(due.downtime * 1000))
            }
            // Hand over new trials while there is room; bgctl runs beside this loop.
            while inFlight.count < concurrency, next < trials.count {
                inFlight.append(try handOver(trials[next], app: app, paths: paths, config: session.config))
                while let moment = moments.first, moment.afterTrial == next {
                    moments.removeFirst()
                    dueKills.append((ContinuousClock.now + .milliseconds(Int64(moment.delay * 1000)), moment.downtime))
                }
                dueKills.sort { $0.at < $1.at }
                next += 1
            }
            // Classify what has ended, and give up on what has taken too long.
            for index in inFlight.indices.reversed() {
                guard let result = settle(&inFlight[index], paths: paths) else { continue }
                results.append(result)
                announce(result)
                inFlight.remove(at: index)
            }
            if (ContinuousClock.now - lastProgress).seconds >= 10 {
                lastProgress = ContinuousClock.now
                Console.line("   bgtaskd: \(results.count)/\(trials.count) ended, \(inFlight.count) in flight, "
                             + "\(daemon.kills)/\(kills.count) kills")
            }
            usleep(50_000)
        }
        // Stopped first: a failed transfer's partial data may go just after its record says so.
        daemon.stop()
        let ended = results.filter { $0.outcome != .stuck }.map(\.trial)
        return Summary(results: results.sorted { $0.trial.number < $1.trial.number }, kills: daemon.kills,
                       killsWithDownloadsInFlight: killsWithDownloadsInFlight, restarts: daemon.restarts, unexpectedExits: daemon.unexpectedExits,
                       leftovers: Self.leftovers(paths: paths, app: app, ended: ended))
    }

    /// Installs the trial's routes and starts `bgctl transfer download`.
    private func handOver(_ trial: FaultTrial, app: Identifier, paths: StatePaths, config: String) throws -> InFlight {
        let identifier = try Identifier(validating: "t\(trial.number)")
        let name = "t\(trial.number).bin"
        let url = trial.serve(on: server, runner: "bgtaskd")
        let started = ContinuousClock.now
        let command = try BackgroundCommand(control, [
            "transfer", "download", "--state", paths.root, "--config", config,
            "--app", app.rawValue, "--id", identifier.rawValue, url, "--to", name,
        ], scratch: workspace.root)
        return InFlight(trial: trial, key: TaskKey(app: app, identifier: identifier),
                        file: "\(paths.downloads(of: app))/\(name)", started: started, handover: command)
    }

    /// The trial's result once it has ended or taken too long; `nil` while it goes on.
    ///
    /// A command that bgctl queued (no daemon running, exit 0) or left queued (no answer in
    /// 10 s, exit 3: the daemon was killed after taking it) is handed over: the daemon applies
    /// it when it comes back. Any other exit is a refusal, which should not happen.
    private func settle(_ flight: inout InFlight, paths: StatePaths) -> TrialResult? {
        let elapsed = (ContinuousClock.now - flight.started).seconds
        if let command = flight.handover {
            if let ending = command.ending {
                guard ending.status == 0 || ending.status == 3 else {
                    return TrialResult(trial: flight.trial, outcome: .stuck,
                                       detail: "bgctl exited \(ending.status): \(ending.stderr)", seconds: elapsed)
                }
                flight.handover = nil
            } else if elapsed > stuckAfter {
                command.stop()
                return TrialResult(trial: flight.trial, outcome: .stuck,
                                   detail: "bgctl transfer download did not return in \(Int(stuckAfter)) s", seconds: elapsed)
            } else {
                return nil
            }
        }
        let record = Self.record(flight.key, paths: paths)
        if let record, let ending = Self.classify(record, file: flight.file, trial: flight.trial) {
            return TrialResult(trial: flight.trial, outcome: ending.outcome, detail: ending.detail, seconds: elapsed)
        }
        guard elapsed > stuckAfter else { return nil }
        let state = record.map {
            "\($0.state.rawValue), \($0.bytesTransferred) bytes, \($0.retries) retries, last error: \($0.lastError ?? "none")"
        } ?? "no record"
        return TrialResult(trial: flight.trial, outcome: .stuck,
                           detail: "not finished after \(Int(stuckAfter)) s (\(state))", seconds: elapsed)
    }

    /// The outcome of a record that has ended; `nil` while it is active.
    static func classify(_ record: TransferRecord, file: String,
                         trial: FaultTrial) -> (outcome: TrialOutcome, detail: String)? {
        switch record.state {
        case .waiting, .running, .paused:
            return nil
        case .completed:
            switch RepresentationCheck.verdict(file, size: trial.size, seeds: trial.acceptableSeeds) {
            case .matches(let seed):
                return (.exact, seed == trial.seed ? "the served representation" : "the changed representation (seed \(seed))")
            case .missing:
                return (.wrong, "completed, but there is no file at \(file)")
            case .differs(let how):
                return (.wrong, "completed with wrong bytes: \(how)")
            }
        case .failed:
            let lastError = record.lastError ?? ""
            if lastError.isEmpty { return (.stuck, "failed without a lastError") }
            if RepresentationCheck.verdict(file, size: trial.size, seeds: []) != .missing {
                return (.stuck, "failed (\(lastError)) but left a file at \(file)")
            }
            return (.failedClearly, lastError)
        case .cancelled:
            return (.stuck, "cancelled, though nobody cancelled it")
        }
    }

    /// The record as the daemon last wrote it: the durable record or its newer progress copy.
    private static func record(_ key: TaskKey, paths: StatePaths) -> TransferRecord? {
        guard let data = try? StateFiles.read(paths.transfer(key)),
              let record = try? JSONFormat.decode(TransferRecord.self, from: data) else { return nil }
        return TransferRecord.newest(record, progressFile: paths.transferProgress(key))
    }

    /// Partial data and validator files of ended trials: the daemon removes them when a transfer
    /// ends, so any left is a leak (not wrong bytes: they never reach the downloads folder).
    private static func leftovers(paths: StatePaths, app: Identifier, ended: [FaultTrial]) -> [String] {
        ended.flatMap { trial -> [String] in
            guard let identifier = try? Identifier(validating: "t\(trial.number)") else { return [] }
            let key = TaskKey(app: app, identifier: identifier)
            return [paths.transferPartialData(key), paths.transferPartialValidator(key)].filter(StateFiles.exists)
        }
    }

    /// Prints a trial that is not exact or clearly failed as soon as it is known.
    private func announce(_ result: TrialResult) {
        guard result.outcome == .wrong || result.outcome == .stuck else { return }
        Console.line("   ! bgtaskd \(result.outcome.rawValue): \(result.trial): \(result.detail)")
    }
}
