import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgtop` in a real terminal shows text clients sent with its control characters written out:
/// an ESC sequence in a finishing task's name or a transfer's URL neither colours, moves nor
/// retitles anything.
@Suite struct DashboardEscapeTests {
    @Test func clientTextReachesTheScreenEscaped() throws {
        let env = try TestEnvironment()
        let app = "a.b"
        try TerminalEscapeTests.addSleepingApp(env, app)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let worker = try Spawn.start("/bin/sleep", ["300"], environment: [:], stdout: "/dev/null", stderr: "/dev/null")
        defer {
            kill(worker, SIGKILL)
            _ = Spawn.wait(worker)
        }
        let command = "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); sleep 60"
        let tmux = try TmuxSession(command: command, width: 200, height: 40)
        try tmux.waitFor("scheduler up")
        let titleBefore = tmux.paneTitle()

        let hostile = TerminalEscapeTests.hostile
        #expect(try env.bgctl("begin-finishing", "--app", app, "--name", hostile, "--pid", "\(worker)").status == 0)
        #expect(try env.bgctl("transfer", "download", "--app", app, "--id", "\(app).file", "--earliest", "+3600",
                              "--to", hostile, "http://127.0.0.1:9/" + hostile).status == 0)

        let screen = try tmux.waitForScreen("both events, escaped") {
            $0.contains(#"began finishing task finishing-1 (\x1b[31mRED\x1b]0;owned\x07\nforged\rover\tnext\x9b2J"#)
                && $0.contains(#"of http://127.0.0.1:9/\x1b[31mRED\x1b]0;owned"#)
        }
        // What follows the name stayed on its line: the newline in it did not break the row.
        let row = screen.split(separator: "\n").first { $0.contains("began finishing task") } ?? ""
        #expect(row.contains(#"\nforged\rover"#), "\(screen)")
        #expect(tmux.paneTitle() == titleBefore, "no OSC sequence reached the terminal")
        #expect(!tmux.screen(escapes: true).contains("\u{1b}]"), "no OSC sequence in what tmux holds")
        tmux.send("q")
    }
}
