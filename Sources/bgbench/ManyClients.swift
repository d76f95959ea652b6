import Foundation
import Synchronization
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Phase 1b: hundreds of clients at once, each sending its commands one after another and waiting
/// for each outcome, as that many `bgctl submit` loops would. Through the command socket (what
/// `CommandChannel.send` does) and, beside it in the same run, through the inbox with an inotify
/// instance per waiting command (what it did before): a user has `fs.inotify.max_user_instances`
/// of those (128 by default), so that path refuses commands once more clients wait.
struct ManyClients {
    /// How a client sends and waits.
    enum Path: String {
        case socket = "command socket (CommandChannel.send)"
        case inboxWithInotify = "inbox + an inotify instance per command"
    }

    struct Result {
        var path: Path
        var clients: Int
        var total: Int
        var acknowledged: Int
        var throughput: Throughput
        var latencies: Samples
        var firstFailure: String?
    }

    var workspace: Workspace
    var scheduler: String
    var clients: Int
    var commandsPerClient: Int

    func run(_ path: Path) throws -> Result {
        let script = "\(workspace.root)/never-launched.sh"
        try workspace.writeScript(script, "#!/bin/sh\nexit 0\n")
        let apps = try DurableSubmits.apps(count: (clients + DurableSubmits.identifiersPerApp - 1) / DurableSubmits.identifiersPerApp,
                                           executable: script)
        let session = try SchedulerSession(workspace: workspace, name: "clients-\(clients)", scheduler: scheduler,
                                           settings: [:], apps: apps)
        defer { session.stop() }
        let later = Date().addingTimeInterval(30 * 86_400)
        // Client i resubmits its own request: every command is applied (a replace), none refused.
        let slices: [[Command]] = (0..<clients).map { client in
            let app = apps[client / DurableSubmits.identifiersPerApp]
            let request = SubmitRequest(app: app.id, identifier: app.identifiers[client % DurableSubmits.identifiersPerApp],
                                        kind: .processing, earliestBeginDate: later)
            return (0..<commandsPerClient).map { _ in Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request)) }
        }
        let paths = session.paths
        // A client whose command fails goes on with its next one, as a script's loop would.
        let failures = Mutex<[String]>([])
        let outcome = WriterThreads.run(slices: slices) { _, slice in
            let channel = CommandChannel(paths: paths)
            var durations: [Double] = []
            for command in slice {
                let start = DispatchTime.now().uptimeNanoseconds
                do {
                    let delivery: CommandChannel.Delivery
                    switch path {
                    case .socket:
                        delivery = try channel.send(command, timeout: 60)
                    case .inboxWithInotify:
                        let watcher = try ChangeWatcher()
                        try watcher.watch(paths.outcomes, mask: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR))
                        try Inbox(paths: paths).enqueue(command)
                        delivery = channel.waitForOutcome(of: command.id, watcher: watcher, timeout: 60)
                    }
                    guard case .applied(let answer) = delivery, answer.error == nil else {
                        throw BenchError("not applied: \(delivery)")
                    }
                    durations.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            return durations
        }
        let failed = failures.withLock { $0 }
        return Result(path: path, clients: clients, total: clients * commandsPerClient, acknowledged: outcome.durations.count,
                      throughput: Throughput(operations: outcome.durations.count, seconds: outcome.seconds),
                      latencies: Samples(outcome.durations), firstFailure: failed.first ?? outcome.failures.first)
    }
}
