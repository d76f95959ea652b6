import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgtop --host` in a real terminal (tmux) over a real ssh to a private sshd on a loopback port,
/// with a real `bgtaskd` on "the remote side" (this machine, another state directory).
@Suite struct RemoteDashboardTests {
    @Test func theRemoteStateIsShownSurvivesALostConnectionAndKeysActThere() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.weather", identifiers: ["com.example.weather.refresh", "com.example.weather.sync"],
                       script: "echo launched >> \"$OUT\"\nsleep 30 & wait $!\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let server = try LoopbackSSHServer(in: env.root)
        defer { server.stop(mentioning: [env.root]) }

        let bgtop = "\(TestEnvironment.binaries)/bgtop --host \(server.destination) --remote-bgctl \(TestEnvironment.binaries)/bgctl "
            + "--state \(env.state) --config \(env.config)"
        let tmux = try TmuxSession(command: "BGTOP_SSH_COMMAND='\(server.sshCommand)' \(bgtop); echo \"bgtop exited $?\"; sleep 60",
                                   width: 140, height: 36)
        let connected = try tmux.waitFor("\(server.destination) connected]", timeout: 15)
        #expect(connected.contains("scheduler up (pid \(daemon.pid)"), "\(connected)")
        #expect(connected.contains("\(server.destination):\(env.state)") || connected.contains(env.state.suffix(20)))

        // A request submitted on the remote side appears.
        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        try tmux.waitFor("weather.refresh", timeout: 5)

        // The ssh process is killed: shown as lost at once, then connected again with what
        // changed meanwhile.
        let clients = server.clients()
        #expect(clients.count == 1, "ssh clients: \(clients)")
        for client in clients { kill(client, SIGKILL) }
        try tmux.waitFor("lost", timeout: 5)
        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.sync", "--kind", "processing",
                              "--earliest", "+3600").status == 0)
        try tmux.waitFor("\(server.destination) connected]", timeout: 15)
        try tmux.waitFor("weather.sync", timeout: 5)
        #expect(server.clients().count == 1)

        // l launches the selected request on the remote side, through the same connection.
        tmux.send("1")
        tmux.send("g")
        tmux.send("l")
        try env.waitUntil("the simulated launch on the remote side", timeout: 10) {
            env.events(.launched).contains { $0.reason == "simulated" }
        }
        try tmux.waitFor("Running handlers (1)", timeout: 5)
        try env.waitUntil("the app to run") { env.output(of: "com.example.weather").contains("launched") }

        // q ends ssh as well; the remote watch ends with its session.
        tmux.send("q")
        try tmux.waitFor("bgtop exited 0", timeout: 10)
        #expect(server.clients().isEmpty, "an ssh client outlived bgtop")
        try env.waitUntil("the remote watch to end") {
            server.processes { $0.contains("watch") && $0.contains(env.state) }.isEmpty
        }
    }

    @Test func severalHostsShowTheirStateAndHSwitchesReadOnly() throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let server = try LoopbackSSHServer(in: env.root)
        defer { server.stop(mentioning: [env.root]) }
        // A second host where nothing listens (sshd listens on 127.0.0.1 only): refused.
        let unreachable = "\(LoopbackSSHServer.user)@127.0.0.2"
        let bgtop = "\(TestEnvironment.binaries)/bgtop --read-only --host \(server.destination) --host \(unreachable) "
            + "--remote-bgctl \(TestEnvironment.binaries)/bgctl --state \(env.state) --config \(env.config)"
        let tmux = try TmuxSession(
            command: "BGTOP_SSH_COMMAND='\(server.sshCommand)' \(bgtop); echo \"bgtop exited $?\"; sleep 60",
            width: 160, height: 36)
        try tmux.waitFor("[\(server.destination) connected]", timeout: 15)
        // The second host is lost, with a retry countdown.
        try tmux.waitFor("\(unreachable) lost: retry in", timeout: 15)
        tmux.send("H")
        // The status line says which host is shown, until a failed retry's report replaces it.
        _ = try tmux.waitForScreen("the second host on screen", timeout: 5) { screen in
            screen.contains("[\(unreachable) lost") && (screen.contains("host 2/2: \(unreachable)")
                || screen.contains("cannot reach \(unreachable)") || screen.contains("\(unreachable): connection lost"))
        }
        tmux.send("H")
        try tmux.waitFor("[\(server.destination) connected]", timeout: 5)
        #expect(server.clients().count >= 1)
        // --read-only holds remotely too: the key is refused before anything is sent.
        tmux.send("1")
        tmux.send("l")
        try tmux.waitFor("read-only: simulate launch is disabled", timeout: 5)
        // SIGTERM ends bgtop (128 + 15) and the ssh it started, reaped: no client is left.
        let dashboards = server.processes { $0.first?.hasSuffix("/bgtop") == true && $0.contains(env.state) }
        #expect(dashboards.count == 1)
        for pid in dashboards { kill(pid, SIGTERM) }
        try tmux.waitFor("bgtop exited 143", timeout: 10)
        #expect(server.clients().isEmpty, "an ssh client outlived bgtop")
    }

    @Test func badCombinationsAreRefusedWithOneLine() throws {
        let env = try TestEnvironment()
        let bgtop = "\(TestEnvironment.binaries)/bgtop"
        for (arguments, words) in [
            (["--demo", "--host", "a@b"], "--demo and --host do not mix"),
            (["--batch", "--host", "a@b"], "--batch reads this machine's state"),
            (["--host=-oProxyCommand=x"], "may not start with '-'"),
            (["--remote-bgctl", "/x/bgctl"], "--remote-bgctl needs --host"),
        ] {
            let result = try env.run(bgtop, arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.split(separator: "\n").count == 1 && result.stderr.contains(words), "\(arguments): \(result)")
        }
    }
}
