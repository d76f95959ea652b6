import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Phase 1, bgtop's side: submit requests through the inbox with full durability and time how
/// fast the real `bgtaskd` applies them.
///
/// Every submit is a real request: a distinct (app, identifier) pair, ten processing identifiers
/// per app (the per-app limit), `earliestBeginDate` a month away so nothing launches. A submit is
/// `Inbox.enqueue`: the command file is written, fsynced, renamed into `inbox/new/` and the folder
/// fsynced — what `bgctl submit` does, minus starting a process. The daemon takes the inbox in
/// batches, appends each batch to its journal (`fdatasync`: durable from there) and applies it; a
/// checkpoint (`syncfs`) follows once it is quiet.
struct DurableSubmits {
    /// How the writers wait.
    enum Mode: String, Sendable {
        /// Writers enqueue back to back; the clock stops when the daemon has applied every command.
        case pipelined
        /// Each writer waits for the outcome of its command before the next, as `bgctl submit`
        /// does, watching the outcomes folder with one inotify instance for all its submits.
        case roundTrip
        /// `CommandChannel.send` per submit, exactly what `bgctl submit` calls: one message on the
        /// scheduler's command socket, answered once committed (no file, no fsync, no inotify of
        /// the writer's).
        case channelSend
        /// `CommandChannel.sendAll`: one connection per writer, up to 16 commands in flight on it,
        /// each acknowledged only once committed (the scheduler syncs the ones in hand together).
        case socketPipelined
    }

    /// One measured row.
    struct Result: Sendable {
        var writers: Int
        var mode: Mode
        /// Submits applied (outcome written, so its batch's journal record synced) per second.
        var throughput: Throughput
        /// Round trip: per-submit latency, enqueue to outcome.
        var latencies: Samples
        /// CPU seconds (user, system) bgtaskd used from the release of the writers to the end.
        var schedulerCPU: (user: Double, system: Double)?
        /// Submits the scheduler refused (must be 0) and the first reason.
        var refused: Int
        var firstRefusal: String?
        /// Request files on disk afterwards (must equal the submits).
        var pendingRequests: Int
    }

    static let identifiersPerApp = 10

    var workspace: Workspace
    var scheduler: String
    var submits: Int

    /// Runs one row of `count` submits (default: `submits`) on a fresh scheduler.
    func run(writers: Int, mode: Mode, count: Int? = nil) throws -> Result {
        let submits = count ?? self.submits
        let script = "\(workspace.root)/never-launched.sh"
        try workspace.writeScript(script, "#!/bin/sh\nexit 0\n")
        let apps = try Self.apps(count: (submits + Self.identifiersPerApp - 1) / Self.identifiersPerApp, executable: script)
        let session = try SchedulerSession(workspace: workspace, name: "submits-\(writers)w-\(mode.rawValue)",
                                           scheduler: scheduler, settings: [:], apps: apps)
        defer { session.stop() }

        let later = Date().addingTimeInterval(30 * 86_400)
        var commands: [Command] = []
        commands.reserveCapacity(submits)
        for index in 0..<submits {
            let app = apps[index / Self.identifiersPerApp]
            let request = SubmitRequest(app: app.id, identifier: app.identifiers[index % Self.identifiersPerApp],
                                        kind: .processing, earliestBeginDate: later)
            commands.append(Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request)))
        }
        let paths = session.paths
        let slices = WriterThreads.deal(commands, into: writers)
        let cpuAtStart = session.cpuSeconds
        let outcome: WriterThreads.Outcome
        switch mode {
        case .pipelined:
            outcome = WriterThreads.run(slices: slices) { _, slice in
                let inbox = Inbox(paths: paths)
                for command in slice { try inbox.enqueue(command) }
                return []
            }
        case .roundTrip:
            outcome = WriterThreads.run(slices: slices) { _, slice in
                let inbox = Inbox(paths: paths)
                let channel = CommandChannel(paths: paths)
                // Watch before writing, as CommandChannel.send does, so no answer is missed.
                let watcher = try ChangeWatcher()
                try watcher.watch(paths.outcomes, mask: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR))
                var durations: [Double] = []
                for command in slice {
                    let start = DispatchTime.now().uptimeNanoseconds
                    try inbox.enqueue(command)
                    guard case .applied = channel.waitForOutcome(of: command.id, watcher: watcher, timeout: 60) else {
                        throw BenchError("no outcome for command \(command.id) within 60 s")
                    }
                    durations.append(secondsSince(start))
                }
                return durations
            }
        case .channelSend:
            outcome = WriterThreads.run(slices: slices) { _, slice in
                let channel = CommandChannel(paths: paths)
                var durations: [Double] = []
                for command in slice {
                    let start = DispatchTime.now().uptimeNanoseconds
                    guard case .applied = try channel.send(command, timeout: 60) else {
                        throw BenchError("no outcome for command \(command.id) within 60 s")
                    }
                    durations.append(secondsSince(start))
                }
                return durations
            }
        case .socketPipelined:
            outcome = WriterThreads.run(slices: slices) { _, slice in
                let deliveries = try CommandChannel(paths: paths).sendAll(slice, inFlight: 16, timeout: 60).map { try $0.get() }
                if let index = deliveries.firstIndex(where: { if case .applied = $0 { false } else { true } }) {
                    throw BenchError("command \(slice[index].id) not answered on the socket: \(deliveries[index])")
                }
                return []
            }
        }
        if let failure = outcome.failures.first { throw BenchError("a bgtop writer failed: \(failure)") }

        // The clock runs until every outcome exists: an outcome is written only after the journal
        // record that holds it is synced, so it is durable then, as a SQLite row is once its WAL
        // frame is. Outcomes stay for outcomeRetentionSeconds (600 s), so each is checked once, in order.
        var confirmed = 0
        try waitUntil("bgtaskd to apply \(submits) submits", timeout: 120, interval: 0.001) {
            while confirmed < commands.count, StateFiles.exists(paths.outcome(commands[confirmed].id)) { confirmed += 1 }
            if confirmed == commands.count { return true }
            guard session.isRunning else { throw BenchError("bgtaskd stopped during the submits: \(session.log)") }
            return false
        }
        let seconds = secondsSince(outcome.startNanoseconds)
        var cpu: (user: Double, system: Double)?
        if let before = cpuAtStart, let after = session.cpuSeconds {
            cpu = (after.user - before.user, after.system - before.system)
        }

        var refused = 0
        var firstRefusal: String?
        for command in commands {
            let data = try StateFiles.read(paths.outcome(command.id))
            let answer = try JSONFormat.decode(CommandOutcome.self, from: data)
            if let error = answer.error {
                refused += 1
                if firstRefusal == nil { firstRefusal = "\(error.name): \(error.message)" }
            }
        }
        let pending = StateSnapshot.load(paths).requests.count
        return Result(writers: writers, mode: mode, throughput: Throughput(operations: submits, seconds: seconds),
                      latencies: Samples(outcome.durations), schedulerCPU: cpu,
                      refused: refused, firstRefusal: firstRefusal, pendingRequests: pending)
    }

    /// `bench.submit.a0000` ... with identifiers `bench.submit.a0000.t0` ... `.t9`.
    static func apps(count: Int, executable: String) throws -> [BenchApp] {
        try (0..<count).map { index in
            let id = try Identifier(validating: String(format: "bench.submit.a%04d", index))
            let identifiers = try (0..<identifiersPerApp).map { try Identifier(validating: "\(id.rawValue).t\($0)") }
            return BenchApp(id: id, identifiers: identifiers, modes: ["processing"], executable: executable)
        }
    }
}
