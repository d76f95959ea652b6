import Foundation
import TestSupport
import Testing
import TaskState

/// Held pushes in `bgtop`, in a real terminal beside a real `bgtaskd`, and the key that sends one.
@Suite struct DashboardPushTests {
    @Test func aHeldPushShowsItsBlockersAndPSendsOneThatCoalesces() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["pushBudgetPerHour": 1])
        try env.addApp(PushTests.app, identifiers: ["com.example.alerts.refresh"], modes: ["fetch", "remote-notification"], script: """
        "$BGCTL" complete "$BGTASK_TASK_IDS" --new-data
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("push", PushTests.app).status == 0)
        try env.waitUntil("the first push to be answered") { !env.events(.completed).isEmpty }
        #expect(try env.bgctl("push", PushTests.app).status == 0)

        let command = "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); sleep 60"
        let tmux = try TmuxSession(command: command, width: 120, height: 30)
        let screen = try tmux.waitFor("push budget")
        #expect(screen.contains("Pending requests (1)"), "\(screen)")
        #expect(screen.contains("prio 10"), "\(screen)")

        // P on the held push's row sends another: it replaces the held one (+1 coalesced).
        tmux.send("1")
        tmux.send("P")
        // The new push's file may show up a moment before the replaced one goes: wait for both, and
        // for the events, which the commit appends after its files.
        try tmux.waitForScreen("the coalesced push alone") {
            $0.contains("+1") && $0.contains("Pending requests (1)") && !env.events(.pushCoalesced).isEmpty
        }
        #expect(env.events(.pushCoalesced).count == 1)
        #expect(env.events(.pushReceived).last?.message.contains("from bgtop") == true)

        // Enter shows why it waits.
        tmux.send("Enter")
        let details = try tmux.waitFor("push budget left this hour")
        #expect(details.contains("coalesced          1 older push(es)"), "\(details)")
        tmux.send("q")
    }
}
