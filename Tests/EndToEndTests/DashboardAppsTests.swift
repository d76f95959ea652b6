import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The apps panel and the demo's transfers in a real terminal (tmux) beside a real scheduler.
@Suite struct DashboardAppsTests {
    /// Whether `bgctl apps --json` says the app's background work is on.
    private func isEnabled(_ app: String, in env: TestEnvironment) throws -> Bool? {
        let result = try env.bgctl("apps", "--json")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let apps = report?["apps"] as? [[String: Any]] ?? []
        return apps.first { $0["id"] as? String == app }?["enabled"] as? Bool
    }

    /// The screen line of the app's row in the apps panel: the app in the first column (events
    /// name it too, further along their line).
    private func appLine(_ app: String, _ screen: String) -> String? {
        screen.split(separator: "\n").map(String.init).first { $0.hasPrefix("│ \(app) ") || $0.hasPrefix("│▶\(app) ") }
    }

    @Test func fiveDYSwitchesAnAppOffInTheSchedulerAndThePanelShowsIt() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.toggle", identifiers: ["com.example.toggle.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let command = "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); echo \"bgtop exited $?\"; sleep 60"
        let tmux = try TmuxSession(command: command, width: 120, height: 30)
        try tmux.waitFor("scheduler up")
        #expect(try isEnabled("com.example.toggle", in: env) == true)

        tmux.send("5")
        let on = try tmux.waitForScreen("the app in the focused apps panel") { screen in
            screen.contains("5 Apps (1)") && self.appLine("com.example.toggle", screen)?.contains("▶") == true
        }
        #expect(appLine("com.example.toggle", on)?.contains(" yes ") == true, "\(on)")

        // d asks; y sends the same command as `bgctl app disable`.
        tmux.send("d")
        try tmux.waitFor("Switch background work for com.example.toggle off?")
        tmux.send("y")
        try env.waitUntil("the scheduler to switch the app off") { try isEnabled("com.example.toggle", in: env) == false }
        let off = try tmux.waitForScreen("the panel to show the app off") { screen in
            self.appLine("com.example.toggle", screen)?.contains(" no ") == true
        }
        #expect(!off.contains("Switch background work"), "the question is gone")
        // What the switch means: the scheduler refuses the app's requests (`unavailable`).
        let refused = try env.bgctl("submit", "--app", "com.example.toggle", "--id", "com.example.toggle.refresh", "--kind", "refresh")
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("unavailable"), "\(refused)")
        try tmux.waitFor("background work is switched off for com.example.toggle")

        // And back on: d, y.
        tmux.send("5")
        tmux.send("d")
        try tmux.waitFor("Switch background work for com.example.toggle on again?")
        tmux.send("y")
        try env.waitUntil("the scheduler to switch the app on") { try isEnabled("com.example.toggle", in: env) == true }
        try tmux.waitForScreen("the panel to show the app on") { screen in
            self.appLine("com.example.toggle", screen)?.contains(" yes ") == true
        }
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    @Test func theDemoFollowsCompletedDownloadsWithOneDownloadAtATimeIntoOneFile() throws {
        let command = "\(TestEnvironment.binaries)/bgtop --demo; echo \"bgtop exited $?\"; sleep 60"
        let tmux = try TmuxSession(command: command, width: 160, height: 48)
        let alive = try tmux.waitForScreen("the demo to come alive", timeout: 20) { $0.contains("scheduler up") }
        let directory = try #require(alive.split(separator: "\n").first?.split(separator: " ").first { $0.contains("bgtop-demo-") })
        let paths = StatePaths(root: String(directory))
        let root = String(directory).replacingOccurrences(of: "/state", with: "")
        defer {
            // However the test ends, the demo ends with it (and removes its directory).
            tmux.send("q")
            _ = try? tmux.waitFor("bgtop exited 0")
        }

        // The first batch: every download the demo starts with that is not held back by a
        // condition runs to completion, and a follow-up download starts. Then that follow-up
        // completes and is followed in turn, into the same file. Throughout, at most one
        // follow-up moves at a time. (The bounds are against a hang, not a speed to meet.)
        let first = ["episode-412", "tiles-region-7", "feed"]
        let initial = first + ["episode-413", "upload-IMG_2041"]
        var transfers: [TransferRecord] = []
        var mostActive = 0
        func followers() -> [TransferRecord] {
            transfers.filter { $0.app.rawValue == "com.example.podcasts" && !initial.contains($0.identifier.rawValue) }
        }
        func look() {
            transfers = StateSnapshot.load(paths).transfers
            mostActive = max(mostActive, followers().filter { $0.state.isActive }.count)
        }
        try waitFor("the first batch to complete with a follow-up running", timeout: 120) {
            look()
            let done = first.allSatisfy { name in transfers.contains { $0.identifier.rawValue == name && $0.state == .completed } }
            return done && followers().contains { $0.state == .running }
        }
        let firstFollower = try #require(followers().first { $0.state == .running }).key
        try waitFor("the follow-up to complete and be followed by another", timeout: 120) {
            look()
            return followers().contains { $0.key == firstFollower && $0.state == .completed }
                && followers().contains { $0.key != firstFollower && $0.state.isActive }
        }
        #expect(mostActive == 1, "one follow-up at a time: \(followers().map { ($0.identifier, $0.state) })")
        #expect(Set(followers().map(\.destination)) == ["next-episode.mp3"], "\(followers().map(\.destination))")
        let files = try FileManager.default.contentsOfDirectory(atPath: paths.downloads(of: try Identifier(validating: "com.example.podcasts")))
        #expect(files.filter { !["episode-412.mp3", "episode-413.mp3"].contains($0) && !$0.hasPrefix(".") } == ["next-episode.mp3"],
                "the follow-ups share one file: \(files)")

        // The transfers panel, focused, shows a moving bar.
        tmux.send("3")
        try tmux.waitForScreen("a running transfer on screen") { screen in
            screen.split(separator: "\n").contains { $0.contains("running") && $0.contains("MB/s") }
        }
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
        #expect(!FileManager.default.fileExists(atPath: root), "the demo removed \(root)")
    }

    private func waitFor(_ what: String, timeout: TimeInterval, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            usleep(100_000)
        }
        if try condition() { return }
        throw TestFailure("timed out after \(timeout) s waiting for \(what)")
    }
}
