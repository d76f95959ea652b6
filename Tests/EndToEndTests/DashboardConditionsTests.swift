import Foundation
import TestSupport
import Testing
import TaskState

/// The conditions menu in a real terminal: its keys reach the scheduler, as `bgctl conditions set`
/// and `bgctl conditions clear` do.
@Suite struct DashboardConditionsTests {
    /// `bgctl status`'s conditions line, once it says what `done` wants.
    private func status(_ env: TestEnvironment, until what: String, _ done: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let result = try env.bgctl("status")
            let line = result.stdout.split(separator: "\n").first { $0.hasPrefix("conditions:") }.map(String.init) ?? ""
            if done(line) { return line }
            if Date() > deadline { throw TestFailure("bgctl status never showed \(what); last: \(line)") }
            usleep(50_000)
        }
    }

    @Test func conditionKeysChangeWhatTheSchedulerUses() throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let before = try status(env, until: "measured conditions") { $0.contains("network=") }
        #expect(!before.contains("(simulated)"))
        let networkUp = before.contains("network=up")
        let command = "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); sleep 60"
        let tmux = try TmuxSession(command: command, width: 120, height: 32)
        try tmux.waitFor("scheduler up")

        tmux.send("C")
        try tmux.waitFor("Esc/C closes")
        tmux.send("n")
        let flipped = "network=\(networkUp ? "down" : "up") (simulated)"
        _ = try status(env, until: flipped) { $0.contains(flipped) }
        tmux.send("w")
        _ = try status(env, until: "lowpower=on (simulated)") { $0.contains("lowpower=on (simulated)") && $0.contains(flipped) }
        // The header marks what is simulated, as the menu does.
        try tmux.waitFor("*simulated")

        tmux.send("x")
        let cleared = try status(env, until: "no simulated condition") { !$0.contains("(simulated)") }
        #expect(cleared.contains(networkUp ? "network=up" : "network=down"))
        tmux.send("Escape")
        try tmux.waitForScreen("the menu to close") { !$0.contains("Esc/C closes") }
        tmux.send("q")
    }

    @Test func readOnlyRefusesTheConditionsMenu() throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let command = "\(TestEnvironment.binaries)/bgtop --read-only --state \(env.state) --config \(env.config); sleep 60"
        let tmux = try TmuxSession(command: command, width: 120, height: 32)
        try tmux.waitFor("scheduler up")
        tmux.send("C")
        try tmux.waitFor("read-only: simulating conditions is disabled")
        #expect(!tmux.screen().contains("Esc/C closes"))
        let line = try status(env, until: "conditions") { $0.contains("network=") }
        #expect(!line.contains("(simulated)"))
        tmux.send("q")
    }
}
