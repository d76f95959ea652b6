import Foundation
import TaskState

/// Phase 3: how late an expiring task hears of it.
///
/// Each of `count` apps gets one app refresh request, launched as in phase 2, with a runtime budget
/// of `budget` seconds. The app traps SIGUSR1, notes the time and exits. The task's deadline is the
/// `launched` event's time plus the budget (exactly what the scheduler computes, to the
/// millisecond the log keeps). Lateness is the app's note minus the deadline, and the `expired`
/// event's time minus the deadline (the scheduler's view, taken just before it sends the signal).
///
/// With `streamingRate` above 0, ``StreamingSubmits`` load the scheduler with that many durable
/// submits per second throughout, and a ``BareTimer`` sleeps until the same deadlines beside it.
struct ExpiryLateness {
    struct Result {
        var observed: ObservedTimings
        /// The bare timer's lateness at the same deadlines (empty when nothing streamed).
        var peer: Samples
        /// Submits applied during the phase, and over how many seconds.
        var streamed: Int
        var seconds: Double
    }

    var workspace: Workspace
    var scheduler: String
    var count: Int
    var budget: Double
    var lead: Double
    var stagger: Double
    var streamingRate: Double = 0

    func run() throws -> Result {
        let out = try workspace.folder(workspace.freshName("expiry-observed"))
        let script = "\(workspace.root)/expiry-app.sh"
        // bash runs a trap only between commands, so the work runs in the background and `wait`
        // returns as soon as the trapped signal arrives (docs/cli.md, launch contract).
        try workspace.writeScript(script, """
            #!/bin/bash
            expired() {
              \(DueRequests.stampCommand(folder: out, suffix: "expired"))
              kill "$worker" 2>/dev/null
              exit 0
            }
            trap expired USR1
            sleep 30 &
            worker=$!
            wait "$worker"

            """)
        var requests = try DueRequests(prefix: "bench.expiry", count: count, executable: script)
        // Every task running at once: the expiry path under load, not the launch limit.
        let settings: [String: Any] = ["coalescingWindowSeconds": 0, "maxConcurrentLaunches": 1024,
                                       "appRefreshBudgetSeconds": budget, "expirationGraceSeconds": 5]
        let streaming = streamingRate > 0
        let session = try SchedulerSession(workspace: workspace, name: streaming ? "expiry-streaming" : "expiry",
                                           scheduler: scheduler, settings: settings,
                                           apps: requests.apps + (streaming ? [StreamingSubmits.benchApp] : []))
        defer { session.stop() }
        let stream = streaming ? StreamingSubmits(paths: session.paths, rate: streamingRate) : nil
        let started = Date()
        if stream != nil { Thread.sleep(forTimeInterval: 0.5) } // the load is steady before the first deadline
        try requests.submit(to: session.paths, lead: lead, stagger: stagger)
        let peer = streaming ? BareTimer(deadlines: requests.due.values.map { $0.addingTimeInterval(budget) }) : nil

        var received: [Identifier: Double] = [:]
        var expired: [Identifier: Event] = [:]
        try waitUntil("\(count) tasks to expire", timeout: lead + budget + Double(count) * stagger + 30, interval: 0.02) {
            received = requests.observed(in: out, suffix: "expired")
            expired = DueRequests.lastEvent(.expired, in: session)
            guard session.isRunning else { throw BenchError("bgtaskd stopped during the expiries: \(session.log)") }
            return received.count == count && expired.count == count
        }
        let streamed = stream?.stop() ?? 0
        let seconds = Date().timeIntervalSince(started)
        let peerLateness = peer?.lateness() ?? Samples([])
        let launched = DueRequests.lastEvent(.launched, in: session)
        var app: [Double] = []
        var daemon: [Double] = []
        for entry in requests.apps {
            guard let start = launched[entry.id]?.time.timeIntervalSince1970 else { continue }
            let deadline = start + budget
            if let time = received[entry.id] { app.append(time - deadline) }
            if let event = expired[entry.id] { daemon.append(event.time.timeIntervalSince1970 - deadline) }
        }
        return Result(observed: ObservedTimings(appObserved: Samples(app), daemonObserved: Samples(daemon),
                                                lateSubmits: requests.lateSubmits(session)),
                      peer: peerLateness, streamed: streamed, seconds: seconds)
    }
}
