import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgtop` in a real terminal (tmux) beside a real `bgtaskd`.
@Suite struct DashboardTerminalTests {
    private func startDashboard(_ env: TestEnvironment, extra: String = "", width: Int = 100, height: Int = 30) throws -> TmuxSession {
        let command = "printf 'before bgtop\\n'; \(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config) \(extra); "
            + "echo \"bgtop exited $?\"; stty -a | tr ' ' '\\n' | grep -x -e echo -e -echo -e icanon -e -icanon | tr '\\n' ' '; echo; sleep 60"
        return try TmuxSession(command: command, width: width, height: height)
    }

    @Test func submitLaunchExpireFilterResizeAndQuit() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.weather", identifiers: ["com.example.weather.refresh", "com.example.weather.other"], script: """
        trap 'echo expired >> "$OUT"; "$BGCTL" complete com.example.weather.refresh --failure; exit 0' USR1
        sleep 30 & wait $!
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let tmux = try startDashboard(env)
        try tmux.waitFor("scheduler up")
        try tmux.waitFor("no pending requests")

        // A submit shows up within a second, without any key press.
        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        let submitted = try tmux.waitFor("Pending requests (1)", timeout: 1)
        #expect(submitted.contains("begin date"))
        // At 100 columns the identifier does not fit beside its app: it loses the app's prefix.
        #expect(submitted.contains("com.example.weather") && submitted.contains("…refresh"), "\(submitted)")

        // l launches the selected pending request; its countdown moves.
        tmux.send("1")
        tmux.send("l")
        try tmux.waitFor("Running handlers (1)", timeout: 3)
        let first = try tmux.waitForScreen("a countdown") { $0.contains("running") }
        usleep(2_200_000)
        let later = tmux.screen()
        #expect(first != later, "the countdown moved")
        #expect(later.contains("simulated"))

        // e makes it expire: the app's trap completes it and the events say so.
        tmux.send("2")
        tmux.send("e")
        try tmux.waitForScreen("the handler to finish", timeout: 5) { $0.contains("Running handlers (0)") }
        try tmux.waitFor("completed", timeout: 3)
        #expect(env.output(of: "com.example.weather").contains("expired"))

        // / filters rows; Esc clears.
        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.other", "--kind", "processing",
                              "--earliest", "+3600").status == 0)
        try tmux.waitFor("…other")
        tmux.send("/")
        tmux.type("other")
        tmux.send("Enter")
        let filtered = try tmux.waitFor("filter: other")
        #expect(filtered.contains("Pending requests (1)"))
        tmux.send("Escape")
        try tmux.waitForScreen("the filter to clear") { !$0.contains("filter: other") }

        // Resize redraws at the new size; too small says so.
        tmux.resize(width: 70, height: 20)
        try tmux.waitFor("terminal too small (need 80×24)")
        tmux.resize(width: 120, height: 32)
        let wide = try tmux.waitFor("Pending requests")
        #expect(wide.split(separator: "\n").first.map { $0.count > 100 } == true)

        // q restores the terminal: the shell's screen is back, echo and canonical mode on.
        tmux.send("q")
        let after = try tmux.waitForScreen("the shell after bgtop") { $0.contains("bgtop exited 0") && $0.contains("icanon") }
        #expect(after.contains("before bgtop"))
        #expect(after.contains("echo icanon") || after.contains("icanon echo"), "\(after)")
    }

    @Test func anIdleDashboardDoesNotWakeUp() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.quiet", identifiers: ["com.example.quiet.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // Due in three hours: nothing on screen counts down by the second.
        #expect(try env.bgctl("submit", "--app", "com.example.quiet", "--id", "com.example.quiet.refresh", "--kind", "refresh",
                              "--earliest", "+10800").status == 0)
        let tmux = try startDashboard(env)
        try tmux.waitFor("Pending requests (1)")
        let pid = try #require(pidOfDashboard(state: env.state))
        // The header clock shows minutes and wakes once a minute: measure away from that edge.
        while Int(Date().timeIntervalSince1970) % 60 > 55 || Int(Date().timeIntervalSince1970) % 60 < 2 { usleep(200_000) }
        usleep(300_000)
        let before = contextSwitches(of: pid)
        usleep(2_000_000)
        let after = contextSwitches(of: pid)
        #expect(after == before, "bgtop woke \(after - before) times in 2 s with nothing counting down")
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    /// Every parameter of every SGR escape (`ESC [ p;p;p m`) in `text`.
    private func sgrParameters(_ text: String) -> [Int] {
        var parameters: [Int] = []
        var rest = Substring(text)
        while let start = rest.range(of: "\u{1B}[") {
            rest = rest[start.upperBound...]
            guard let end = rest.firstIndex(where: { !($0.isNumber || $0 == ";") }) else { break }
            if rest[end] == "m" { parameters += rest[..<end].split(separator: ";").compactMap { Int($0) } }
            rest = rest[end...]
        }
        return parameters
    }

    private func pidOfDashboard(state: String) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                  let command = try? String(contentsOfFile: "/proc/\(entry)/cmdline", encoding: .utf8) else { continue }
            let words = command.split(separator: "\0")
            if words.first?.hasSuffix("/bgtop") == true, words.contains(Substring(state)) { return pid }
        }
        return nil
    }

    @Test func theDemoComesAliveAndCleansUpAfterItself() throws {
        let command = "\(TestEnvironment.binaries)/bgtop --demo; echo \"bgtop exited $?\"; sleep 60"
        let tmux = try TmuxSession(command: command, width: 160, height: 48)
        // The scheduler is up, apps have been launched and are running with their countdowns,
        // requests wait with their reasons, and events flow. (The bound is against a hang; how
        // fast the demo starts is not a test's to judge.)
        let alive = try tmux.waitForScreen("the demo to come alive", timeout: 20) { screen in
            screen.contains("scheduler up") && !screen.contains("Running handlers (0)") && screen.contains("begin date")
                && screen.contains("launched")
        }
        let directory = try #require(alive.split(separator: "\n").first?.split(separator: " ").first { $0.hasPrefix("/tmp/bgtop-demo-") || $0.contains("bgtop-demo-") })
        let root = String(directory).replacingOccurrences(of: "/state", with: "")
        #expect(FileManager.default.fileExists(atPath: root))

        // Real transfers move against the demo's loopback server: a running one with a rate, one
        // finished, and the one whose connection drops resumes from where it was.
        try tmux.waitForScreen("transfers to move", timeout: 5) { screen in
            screen.contains("episode-412") && screen.contains("MB/s") && screen.contains("completed")
        }
        try tmux.waitFor("started from byte 21000000", timeout: 20)
        // Stormy, built with the BackgroundTasks library, runs in it.
        try tmux.waitFor("com.example.stormy.refresh completed successfully", timeout: 10)

        // Every demo app keeps the dashboard moving: expirations come without any key.
        try tmux.waitFor("expired", timeout: 20)

        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
        #expect(!FileManager.default.fileExists(atPath: root), "the demo removed \(root)")
    }

    @Test func sigtermRestoresTheTerminal() throws {
        let env = try TestEnvironment()
        let tmux = try startDashboard(env)
        try tmux.waitFor("Pending requests")
        let pid = try #require(pidOfDashboard(state: env.state))
        kill(pid, SIGTERM)
        let after = try tmux.waitForScreen("the shell after SIGTERM") { $0.contains("bgtop exited 143") && $0.contains("icanon") }
        #expect(after.contains("before bgtop"))
        #expect(after.contains("echo icanon") || after.contains("icanon echo"), "\(after)")
    }

    @Test func noColorAndAPlainLocaleStepDown() throws {
        let env = try TestEnvironment()
        let command = "NO_COLOR=1 LC_ALL=C LANG=C \(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); sleep 60"
        let tmux = try TmuxSession(command: command)
        let screen = try tmux.waitFor("Pending requests")
        // ASCII borders in a non-UTF-8 locale.
        #expect(screen.contains("+- 1 Pending requests"), "\(screen)")
        #expect(!screen.contains("╭"))
        // No colour at all under NO_COLOR: the escapes tmux reports carry attributes only.
        let styled = tmux.screen(escapes: true)
        let colours = sgrParameters(styled).filter { (30...37).contains($0) || (40...47).contains($0) || (90...97).contains($0)
            || (100...107).contains($0) || $0 == 38 || $0 == 48 }
        #expect(colours.isEmpty, "colour escapes under NO_COLOR: \(colours)")
        #expect(sgrParameters(styled).contains(1), "bold still marks titles")
        tmux.send("q")

        // The same dashboard in a 256-colour terminal does use colour. (`swift test` itself sets
        // NO_COLOR for the processes it starts, hence the env -u.)
        let coloured = try TmuxSession(command: "env -u NO_COLOR \(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); sleep 60")
        try coloured.waitFor("Pending requests")
        #expect(coloured.screen(escapes: true).contains("38;5;"), "256-colour foregrounds in xterm-256color")
        coloured.send("q")
    }

    @Test func aSchedulerThatDiesIsShownDownAtOnceAndAMissingStateDirectoryIsWaitedFor() throws {
        let env = try TestEnvironment()
        try FileManager.default.removeItem(atPath: env.state)
        let tmux = try startDashboard(env, width: 200)
        let first = try tmux.waitFor("does not exist yet")
        #expect(first.contains("scheduler down"))

        // The scheduler creates the directory: the dashboard notices without a key press.
        let daemon = try env.startDaemon()
        try tmux.waitFor("scheduler up", timeout: 2)
        // Killed without a chance to write anything: a pidfd tells the dashboard.
        daemon.crash()
        try tmux.waitFor("scheduler down", timeout: 1)
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    @Test func aRemovedManifestShowsAsABlockerAtOnce() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.gone", identifiers: ["com.example.gone.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", "com.example.gone", "--id", "com.example.gone.refresh", "--kind", "refresh",
                              "--earliest", "+10800").status == 0)
        let tmux = try startDashboard(env)
        try tmux.waitFor("gone.refresh")
        #expect(!tmux.screen().contains("no manifest"))
        // Nothing in the state directory changes; the dashboard watches the manifests itself.
        try FileManager.default.removeItem(atPath: env.config + "/apps/com.example.gone.json")
        try tmux.waitFor("no manifest", timeout: 1)
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    @Test func anUnknownThemeIsReportedAndTheDefaultUsed() throws {
        let env = try TestEnvironment()
        let tmux = try startDashboard(env, extra: "--theme no-such-theme", width: 200)
        let screen = try tmux.waitFor("unknown theme 'no-such-theme'")
        #expect(screen.contains("Pending requests"))
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    @Test func readOnlyRefusesActionsAndSaysSo() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.ro", identifiers: ["com.example.ro.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", "com.example.ro", "--id", "com.example.ro.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        let tmux = try startDashboard(env, extra: "--read-only")
        try tmux.waitFor("ro.refresh")
        tmux.send("l")
        try tmux.waitFor("read-only: simulate launch is disabled")
        usleep(300_000)
        #expect(try env.tasks().isEmpty)
        #expect(try env.requests().count == 1)
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0")
    }

    @Test func notATerminalPointsToBgctlList() throws {
        let env = try TestEnvironment()
        let result = try env.run(TestEnvironment.binaries + "/bgtop", ["--state", env.state], environment: ["TERM": "dumb"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("bgtop: not a terminal"))
        #expect(result.stderr.contains("bgctl list"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test func batchPrintsOneSnapshot() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.batch", identifiers: ["com.example.batch.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", "com.example.batch", "--id", "com.example.batch.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        let result = try env.run(TestEnvironment.binaries + "/bgtop", ["--batch", "--state", env.state, "--config", env.config])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("scheduler up"))
        #expect(result.stdout.contains("com.example.batch.refresh"))
        #expect(!result.stdout.contains("\u{1B}"), "plain text, no escape sequences")
        // Every box with its column header (review of issue 15, item 6: four were compact).
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let titles = lines.indices.filter { lines[$0].hasPrefix("+- ") }
        #expect(titles.count == 5, "\(result.stdout)")
        for index in titles {
            let header = index + 1 < lines.count ? lines[index + 1] : ""
            #expect(header.hasPrefix("| APP ") || header.hasPrefix("| TIME "), "\(lines[index]) has its column header:\n\(result.stdout)")
        }
    }
}
