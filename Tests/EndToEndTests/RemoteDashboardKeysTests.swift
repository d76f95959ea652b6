import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The dashboard's answers to "what is this app allowed to do, what did its handler print, what
/// ran when, what if the network went away" over `bgtop --host`: a real terminal (tmux), a real
/// ssh to a private sshd on a loopback port, and a real `bgtaskd` on "the remote side" (this
/// machine, another state directory). What a key did is checked where it happened: with the
/// remote `bgctl`, in the remote log and event log.
@Suite struct RemoteDashboardKeysTests {
    /// `bgtop --host` on the server's destination, over the environment's directories as the
    /// remote ones, in a terminal; its exit status is printed when it ends.
    private func remoteDashboard(_ env: TestEnvironment, _ server: LoopbackSSHServer) throws -> TmuxSession {
        let bgtop = "\(TestEnvironment.binaries)/bgtop --host \(server.destination) --remote-bgctl \(TestEnvironment.binaries)/bgctl "
            + "--state \(env.state) --config \(env.config)"
        let tmux = try TmuxSession(command: "BGTOP_SSH_COMMAND='\(server.sshCommand)' \(bgtop); echo \"bgtop exited $?\"; sleep 60",
                                   width: 140, height: 36)
        try tmux.waitFor("[\(server.destination) connected]", timeout: 15)
        return tmux
    }

    /// `q` ends bgtop, its ssh, and the remote watch with its session.
    private func quit(_ tmux: TmuxSession, _ env: TestEnvironment, _ server: LoopbackSSHServer) throws {
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0", timeout: 10)
        #expect(server.clients().isEmpty, "an ssh client outlived bgtop")
        try env.waitUntil("the remote watch to end") {
            remoteWatches(env, server).isEmpty
        }
    }

    /// The `bgctl watch` processes ssh started on "the remote side".
    private func remoteWatches(_ env: TestEnvironment, _ server: LoopbackSSHServer) -> [pid_t] {
        server.processes { $0.first?.hasSuffix("/bgctl") == true && $0.contains("watch") && $0.contains(env.state) }
    }

    /// Whether the remote `bgctl apps --json` says the app's background work is on.
    private func isEnabled(_ app: String, in env: TestEnvironment) throws -> Bool? {
        let result = try env.bgctl("apps", "--json")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let apps = report?["apps"] as? [[String: Any]] ?? []
        return apps.first { $0["id"] as? String == app }?["enabled"] as? Bool
    }

    /// The screen line of the app's row in the apps panel (events name the app further along).
    private func appLine(_ app: String, _ screen: String) -> String? {
        screen.split(separator: "\n").map(String.init).first { $0.hasPrefix("│ \(app) ") || $0.hasPrefix("│▶\(app) ") }
    }

    /// The timeline's lane of `app`: the screen line that names it.
    private func lane(_ app: String, in screen: String) -> String? {
        screen.split(separator: "\n").map(String.init).first { $0.contains("\(app) ") && !$0.contains("runs of") }
    }

    /// The remote `bgctl status`'s conditions line, once it says what `done` wants.
    private func conditions(_ env: TestEnvironment, until what: String, _ done: (String) -> Bool) throws -> String {
        var line = ""
        do {
            try env.waitUntil("bgctl status to show \(what)") {
                let result = try env.bgctl("status")
                line = result.stdout.split(separator: "\n").first { $0.hasPrefix("conditions:") }.map(String.init) ?? ""
                return done(line)
            }
        } catch {
            throw TestFailure("bgctl status never showed \(what); last: \(line)")
        }
        return line
    }

    /// `5`, `d`, `y` and `C`, `n`, `x` act on the remote scheduler, through the connection;
    /// Enter shows the remote app's detail.
    @Test func appsAndConditionsKeysActOnTheRemoteScheduler() throws {
        let env = try TestEnvironment()
        let app = "com.example.toggle"
        try env.addApp(app, identifiers: ["\(app).refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let server = try LoopbackSSHServer(in: env.root)
        defer { server.stop(mentioning: [env.root]) }
        let before = try conditions(env, until: "measured conditions") { $0.contains("network=") }
        #expect(!before.contains("(simulated)"))
        let networkUp = before.contains("network=up")
        #expect(try isEnabled(app, in: env) == true)
        let tmux = try remoteDashboard(env, server)

        // 5: the remote apps, the app selected.
        tmux.send("5")
        // (Every check of the screen is in the condition waited for: a screen caught while it is
        // drawn holds only part of the new picture.)
        try tmux.waitForScreen("the remote app, on, in the focused apps panel") { screen in
            screen.contains("5 Apps (1)") && self.appLine(app, screen).map { $0.contains("▶") && $0.contains(" yes ") } == true
        }

        // d, y: switched off on the remote side; the status line has the remote scheduler's answer.
        tmux.send("d")
        try tmux.waitFor("Switch background work for \(app) off?")
        tmux.send("y")
        try env.waitUntil("the remote scheduler to switch the app off") { try isEnabled(app, in: env) == false }
        try tmux.waitForScreen("the panel to show the app off, the question gone, the answer") { screen in
            self.appLine(app, screen)?.contains(" no ") == true && !screen.contains("Switch background work")
                && screen.contains("\(app) disabled")
        }
        // What the switch means there: the remote scheduler refuses the app's requests, and its
        // event comes over the feed.
        let refused = try env.bgctl("submit", "--app", app, "--id", "\(app).refresh", "--kind", "refresh")
        #expect(refused.status != 0 && refused.stderr.contains("unavailable"), "\(refused)")
        try tmux.waitFor("unavailable: background work is switched off for \(app)")
        // Enter: the app's detail, from the record and the manifest the feed carries.
        tmux.send("Enter")
        try tmux.waitForScreen("the detail with the remote manifest's executable") { screen in
            screen.contains("off: nothing is launched (d switches it on)") && screen.contains("\(env.root)/\(app).sh")
        }
        tmux.send("Escape")
        try tmux.waitForScreen("the detail to close") { !$0.contains("off: nothing is launched") }

        // And back on.
        tmux.send("d")
        try tmux.waitFor("Switch background work for \(app) on again?")
        tmux.send("y")
        try env.waitUntil("the remote scheduler to switch the app on") { try isEnabled(app, in: env) == true }
        try tmux.waitForScreen("the panel to show the app on") { screen in
            self.appLine(app, screen)?.contains(" yes ") == true
        }

        // C, n: the remote scheduler's network is simulated the other way; the header, built
        // from the feed, marks it; x clears it.
        tmux.send("C")
        try tmux.waitFor("Esc/C closes")
        tmux.send("n")
        let flipped = "network=\(networkUp ? "down" : "up") (simulated)"
        _ = try conditions(env, until: flipped) { $0.contains(flipped) }
        try tmux.waitFor("*simulated")
        tmux.send("x")
        let cleared = try conditions(env, until: "no simulated condition") { !$0.contains("(simulated)") }
        #expect(cleared.contains(networkUp ? "network=up" : "network=down"))
        try tmux.waitForScreen("the header without a simulated condition") { !$0.contains("*simulated") }
        tmux.send("Escape")
        try tmux.waitForScreen("the menu to close") { !$0.contains("Esc/C closes") }
        try quit(tmux, env, server)
    }

    /// `o` reads the remote log (at the launch, at the end from the apps panel, `/` beyond what
    /// is in memory) and follows it over the feed; `T` draws remote runs, from the snapshot's
    /// events and from those that came after.
    @Test func pagerAndTimelineReadTheRemoteLogAndEvents() throws {
        let env = try TestEnvironment()
        let chatty = "com.example.chatty"
        let identifier = "\(chatty).sync"
        // An early line, then more lines than the pager reads at once: a search for it from the
        // end must ask the remote side.
        try env.addApp(chatty, identifiers: [identifier], script: """
        echo "needle from the start of $BGTASK_LAUNCH_ID"
        seq 1 1200 | sed 's/^/filler /'

        """ + TestEnvironment.scriptCompletingOnExpiry(identifier, printing: "chatty started $BGTASK_LAUNCH_ID"))
        try env.addApp("com.example.early", identifiers: ["com.example.early.refresh"], script: """
        "$BGCTL" complete com.example.early.refresh --success
        """)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let server = try LoopbackSSHServer(in: env.root)
        defer { server.stop(mentioning: [env.root]) }

        // A run that completed before bgtop started: the timeline has it from the snapshot's events.
        #expect(try env.bgctl("submit", "--app", "com.example.early", "--id", "com.example.early.refresh", "--kind", "refresh").status == 0)
        try env.waitUntil("the early run to complete") { env.events(.completed).contains { $0.app?.rawValue == "com.example.early" } }
        // A handler running on the remote side.
        #expect(try env.bgctl("submit", "--app", chatty, "--id", identifier, "--kind", "processing", "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", identifier).status == 0)
        let logPath = "\(env.paths.logs)/\(chatty).log"
        try env.waitUntil("the handler's lines") {
            ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").contains("chatty started")
        }
        defer {
            // The handler ends before the scheduler: its trap completes the task.
            _ = try? env.bgctl("simulate-expiration", identifier)
            try? env.waitUntil("the handler to finish") { try env.tasks().isEmpty }
        }
        let tmux = try remoteDashboard(env, server)
        try tmux.waitFor("Running handlers (1)")

        // o on the running handler: the remote log at the launch's marker, with the handler's
        // first line under it.
        tmux.send("2")
        tmux.send("o")
        try tmux.waitForScreen("the remote log at the launch") { screen in
            screen.contains("logs/\(chatty).log") && screen.contains("--- bgtaskd: launch \(chatty)-")
                && screen.contains("needle from the start of \(chatty)-")
        }
        tmux.send("Escape")
        try tmux.waitFor("Running handlers (1)")

        // o on the app's row: the remote log at its end, following. Lines appended on the remote
        // side show: the watch says the log changed, the pager asks for what was appended.
        tmux.send("5")
        tmux.send("g")
        try tmux.waitForScreen("the app selected in the apps panel") { self.appLine(chatty, $0)?.contains("▶") == true }
        tmux.send("o")
        let end = try tmux.waitForScreen("the remote log's end, followed") { $0.contains("chatty started") && $0.contains("following") }
        #expect(!end.contains("needle from the start"), "opened at the end: \(end)")
        for index in 1...3 {
            try append("appended on the remote side \(index)\n", to: logPath)
            try tmux.waitFor("appended on the remote side \(index)")
        }
        // / finds a line that is not in memory: the search is read on the remote side.
        tmux.send("/")
        tmux.type("needle from")
        tmux.send("Enter")
        // A match above the end stops following.
        try tmux.waitForScreen("the match read from the remote log") { screen in
            screen.split(separator: "\n").contains { $0.hasPrefix("│▶needle from the start of \(chatty)-") } && screen.contains("paused")
        }

        // A read under way when the connection ends, and lines written while it is down: once
        // connected again the pager shows the log's end, and follows it. The remote watch is
        // stopped, so G's read is certainly unanswered; bgtop is stopped while ssh is killed and
        // the next G typed, so that key's read is written to the dead ssh before bgtop sees it
        // exit (keys come first): an EPIPE to handle, not a SIGPIPE that ends bgtop.
        let watches = remoteWatches(env, server)
        #expect(watches.count == 1, "remote watches: \(watches)")
        let dashboards = server.processes { $0.first?.hasSuffix("/bgtop") == true && $0.contains(env.state) }
        #expect(dashboards.count == 1, "bgtop: \(dashboards)")
        for watch in watches { kill(watch, SIGSTOP) }
        tmux.send("G")
        try tmux.waitForScreen("G's read sent") { $0.contains("following") }
        try append("written while the connection was down\n", to: logPath)
        for dashboard in dashboards { kill(dashboard, SIGSTOP) }
        for client in server.clients() { kill(client, SIGKILL) }
        tmux.send("G")
        for dashboard in dashboards { kill(dashboard, SIGCONT) }
        for watch in watches { kill(watch, SIGCONT) }
        // (The pager covers the header: the new connection is seen as a new remote watch.)
        try env.waitUntil("a new remote watch", timeout: 15) {
            if !dashboards.allSatisfy(processIsAlive) { throw TestFailure("bgtop ended when its ssh was killed:\n\(tmux.screen())") }
            return !remoteWatches(env, server).filter { !watches.contains($0) }.isEmpty
        }
        try tmux.waitForScreen("the log's end read again", timeout: 10) { screen in
            screen.contains("written while the connection was down") && screen.contains("following")
        }
        try append("written after the connection came back\n", to: logPath)
        try tmux.waitFor("written after the connection came back")
        tmux.send("Escape")
        try tmux.waitForScreen("the panels again") { $0.contains("Running handlers (1)") && !$0.contains("logs/\(chatty).log") }

        // The handler expires on the remote side and ends; T shows the run as expired.
        #expect(try env.bgctl("simulate-expiration", identifier).status == 0)
        try env.waitUntil("the run to end") { try env.tasks().isEmpty && env.events(.completed).contains { $0.app?.rawValue == chatty } }
        try tmux.waitFor("Running handlers (0)")
        tmux.send("T")
        let timeline = try tmux.waitForScreen("the remote runs in their lanes") { screen in
            lane(chatty, in: screen)?.contains("▓") == true && lane("com.example.early", in: screen)?.contains("█") == true
        }
        #expect(lane(chatty, in: timeline)?.contains("▒") == false, "not drawn as still running: \(timeline)")
        // The first lane (chatty's): its one run, expired, launched by simulate-launch.
        tmux.send("Enter")
        try tmux.waitForScreen("the lane's run listed: expired, simulated") { screen in
            let run = screen.split(separator: "\n").first { $0.contains(identifier) }
            return screen.contains("runs of \(chatty) in this window") && run?.contains("expired") == true && run?.contains("simulated") == true
        }
        tmux.send("Escape")
        try tmux.waitForScreen("the panels again") { $0.contains("Pending requests") && !$0.contains("Timeline ─") }
        try quit(tmux, env, server)
    }

    private func append(_ text: String, to path: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }
}
