import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The timeline in a real terminal beside a real scheduler: runs from the log read at start and
/// runs appended while `bgtop` is open, each drawn as it ended.
@Suite struct TimelineTerminalTests {
    /// The timeline's lane of `app`: the screen line that names it.
    private func lane(_ app: String, in screen: String) -> String? {
        screen.split(separator: "\n").map(String.init).first { $0.contains("\(app) ") && !$0.contains("runs of") }
    }

    @Test func aRunThatJustExpiredShowsAsExpired() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.early", identifiers: ["com.example.early.refresh"], script: """
        "$BGCTL" complete com.example.early.refresh --success
        """)
        try env.addApp("com.example.weather", identifiers: ["com.example.weather.refresh"], script: """
        trap 'echo expired >> "$OUT"; "$BGCTL" complete com.example.weather.refresh --success; exit 0' USR1
        sleep 30 & wait $!
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // A run that completed before bgtop started: read from the log at start.
        #expect(try env.bgctl("submit", "--app", "com.example.early", "--id", "com.example.early.refresh", "--kind", "refresh").status == 0)
        try env.waitUntil("the early run to complete") { env.events(.completed).contains { $0.app?.rawValue == "com.example.early" } }

        let command = "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); echo \"bgtop exited $?\"; sleep 60"
        let tmux = try TmuxSession(command: command, width: 120, height: 30)
        try tmux.waitFor("scheduler up")

        // A run launched, expired and ended while bgtop is open: read as it is appended.
        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", "com.example.weather.refresh").status == 0)
        try env.waitUntil("the weather run to start") { try env.tasks().count == 1 }
        #expect(try env.bgctl("simulate-expiration", "com.example.weather.refresh").status == 0)
        try env.waitUntil("the weather run to end") {
            try env.tasks().isEmpty && env.events(.completed).contains { $0.app?.rawValue == "com.example.weather" }
        }
        #expect(env.output(of: "com.example.weather").contains("expired"))
        try tmux.waitFor("Running handlers (0)")

        tmux.send("T")
        // Every check is part of what is waited for: a screen caught mid-draw holds only part of it.
        // The weather run is not drawn as still running (▒), and the legend explains the mark.
        _ = try tmux.waitForScreen("the timeline's lanes") { screen in
            lane("com.example.weather", in: screen)?.contains("▓") == true && lane("com.example.early", in: screen)?.contains("█") == true
                && lane("com.example.weather", in: screen)?.contains("▒") == false
                && screen.contains("Timeline ─ 1 h") && screen.contains("▓ expired")
        }

        // The weather lane's runs: one, expired, launched by simulate-launch.
        tmux.send("j")
        tmux.send("Enter")
        _ = try tmux.waitForScreen("the weather lane's runs, expired and simulated") { screen in
            let run = screen.split(separator: "\n").first { $0.contains("com.example.weather.refresh") }
            return screen.contains("runs of com.example.weather in this window")
                && run?.contains("expired") == true && run?.contains("simulated") == true
        }

        // Esc closes it; q then quits bgtop.
        tmux.send("Escape")
        try tmux.waitForScreen("the panels again") { $0.contains("Pending requests") && !$0.contains("Timeline ─") }
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }
}
