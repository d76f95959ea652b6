import Foundation
import LoopbackServer
import TaskState

/// `bgbench push`'s measurements: how long from sending a push to the app's handler running,
/// one stopped app at a time (the launch path), by each way a push can arrive.
struct PushLatency {
    var workspace: Workspace
    var scheduler: String
    var count: Int

    /// How a push is sent.
    enum Sender {
        /// `bgctl push APP`, a process per push, as a script would.
        case bgctl(String)
        /// A `push` command written straight into the inbox, as a program using TaskState would.
        case inbox
        /// A message published on a loopback ntfy server, to a topic of the app's own that its
        /// manifest subscribes to: the scheduler's subscriber makes it a push.
        case stream(PushTopicServer)
    }

    /// Sends `count` pushes, one to each of `count` stopped apps, one after another, each once
    /// the app before it has started; returns send -> app running, per push.
    func run(_ sender: Sender, name: String) throws -> Samples {
        let out = try workspace.folder("push-\(name)")
        let script = "\(workspace.root)/push-\(name).sh"
        try workspace.writeScript(script, """
            #!/bin/bash
            \(DueRequests.stampCommand(folder: out, suffix: "start"))

            """)
        let apps = try (0..<count).map { index in
            let id = try Identifier(validating: String(format: "bench.push.\(name).a%03d", index))
            var app = BenchApp(id: id, identifiers: [try Identifier(validating: "\(id.rawValue).refresh")],
                               modes: ["fetch", "remote-notification"], executable: script)
            if case .stream(let server) = sender { app.push = [server.url(of: Self.topic(of: id))] }
            return app
        }
        let session = try SchedulerSession(workspace: workspace, name: "push-\(name)", scheduler: scheduler, settings: [:], apps: apps)
        defer { session.stop() }
        if case .stream = sender {
            try waitUntil("\(count) push streams to connect", timeout: 60, interval: 0.01) {
                guard session.isRunning else { throw BenchError("bgtaskd stopped: \(session.log)") }
                let connected = StateSnapshot.load(session.paths).subscriptions.filter { $0.streams.first?.state == .connected }
                return connected.count == count
            }
        }
        var latencies: [Double] = []
        for app in apps {
            let sentAt = Date().timeIntervalSince1970
            switch sender {
            case .bgctl(let bgctl):
                let result = try Subprocess.run(bgctl, ["push", app.id.rawValue, "--state", session.paths.root, "--config", session.config],
                                                scratch: workspace.root)
                guard result.succeeded else { throw BenchError("bgctl push failed: \(result.stderr)") }
            case .inbox:
                try Inbox(paths: session.paths).enqueue(Command(issuedAt: Date(), issuerPID: getpid(), action: .push(PushRequest(app: app.id))))
            case .stream(let server):
                _ = server.publish(topic: Self.topic(of: app.id), message: PushPayload.wakeUp.text, priority: 4)
            }
            let path = "\(out)/\(app.id.rawValue).start"
            var started: Double?
            try waitUntil("\(app.id) to start", timeout: 30, interval: 0.001) {
                guard session.isRunning else { throw BenchError("bgtaskd stopped: \(session.log)") }
                started = (try? String(contentsOfFile: path, encoding: .utf8))
                    .flatMap { $0.split(separator: "\n").first }.flatMap { Double($0.replacingOccurrences(of: ",", with: ".")) }
                return started != nil
            }
            if let started { latencies.append(started - sentAt) }
        }
        return Samples(latencies)
    }

    /// The app's own topic on the loopback server.
    static func topic(of app: Identifier) -> String { app.rawValue.replacingOccurrences(of: ".", with: "-") }
}
