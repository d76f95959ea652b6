import Foundation
import TestSupport
import Testing
import TaskState

/// `bgtop`'s CPU% and MEM in a real terminal, measured by the real scheduler's resource monitor.
@Suite struct DashboardResourceTests {
    /// The CPU% of the running row of `app`: the first number with one decimal on its line.
    static func cpuPercent(of app: String, in screen: String) -> Double? {
        guard let line = screen.split(separator: "\n").first(where: { $0.contains(app) && $0.contains("appRefresh") }) else { return nil }
        return line.split(separator: " ").lazy.compactMap { token -> Double? in
            guard token.wholeMatch(of: /[0-9]{1,4}\.[0-9]/) != nil else { return nil }
            return Double(token)
        }.first
    }

    /// The spinner's share of a core depends on the machine's load (alone: about 100; on a busy
    /// 2-core machine, 30 or less), so the screen is checked against the monitor's own figure for
    /// the launch, read at the same moment, and against an idle process's 0.0.
    @Test func aHandlerSpinningACoreShowsTheMonitorsCPUPercent() throws {
        let env = try TestEnvironment()
        // The CPU monitor off and a long budget: the spinner runs until the test expires it.
        try env.writeSettings(["cpuLimitPercent": 0, "appRefreshBudgetSeconds": 120, "usagePrediction": false])
        try env.addApp("com.example.spinner", identifiers: ["com.example.spinner.refresh"], script: """
        trap '"$BGCTL" complete com.example.spinner.refresh --success; exit 0' USR1
        while :; do :; done
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", "com.example.spinner", "--id", "com.example.spinner.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", "com.example.spinner.refresh").status == 0)
        defer {
            _ = try? env.bgctl("simulate-expiration", "com.example.spinner.refresh")
            try? env.waitUntil("the spinner to end") { try env.tasks().isEmpty }
        }

        let command = "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); echo \"bgtop exited $?\"; sleep 60"
        let tmux = try TmuxSession(command: command, width: 160, height: 40)
        try tmux.waitFor("scheduler up")
        var seen: [Double] = []
        // Every check is part of what is waited for: a screen caught mid-draw holds only part of it.
        var measured: [Double] = []
        let screen = try tmux.waitForScreen("the spinner's CPU% to be the monitor's, and busy", timeout: 30) { screen in
            guard screen.contains("CPU%"), screen.contains("MEM"), let cpu = Self.cpuPercent(of: "com.example.spinner", in: screen),
                  let report = try? JSONFormat.decode(ResourceReport.self, from: Data(contentsOf: URL(fileURLWithPath: env.paths.resources))),
                  let monitor = report.launches.first(where: { $0.app.rawValue == "com.example.spinner" })?.cpuPercent else {
                return false
            }
            seen.append(cpu)
            measured.append(monitor)
            // A sample apart at most (the screen may show the one before); a spinner is never idle.
            return cpu >= 10 && cpu <= 100 && abs(cpu - monitor) <= 20
        }
        #expect(!seen.isEmpty, "shown \(seen), measured \(measured)")
        #expect(screen.contains("com.example.spinner"), "\(seen)")
        let line = try #require(screen.split(separator: "\n").first { $0.contains("com.example.spinner") && $0.contains("appRefresh") })
        #expect(line.contains(#/[0-9.]+[KMG] /#), "a memory figure in htop's units: \(line)")

        // The figure is the monitor's: resources.json names the launch with about one core.
        let report = try JSONFormat.decode(ResourceReport.self, from: Data(contentsOf: URL(fileURLWithPath: env.paths.resources)))
        let launch = try #require(report.launches.first { $0.app.rawValue == "com.example.spinner" })
        #expect(launch.cpuSeconds > 0)
        #expect(launch.memoryBytes > 0)
    }
}
