import Foundation
import TestSupport
import Testing
import TaskState

/// The log pager in a real terminal beside a real scheduler: `o` on a running handler opens its
/// app's log at the launch's marker, and what is appended to the log is on screen within a second
/// (inotify wakes the dashboard; nothing polls).
@Suite struct DashboardLogPagerTests {
    @Test func oOpensTheRunningAppsLogAndAnAppendShowsWithinASecond() throws {
        let env = try TestEnvironment()
        let app = "com.example.chatty"
        let identifier = "com.example.chatty.sync"
        try env.addApp(app, identifiers: [identifier], script: TestEnvironment.scriptCompletingOnExpiry(identifier, printing: "chatty started $BGTASK_LAUNCH_ID"))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", app, "--id", identifier, "--kind", "processing", "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", identifier).status == 0)
        let logPath = "\(env.paths.logs)/\(app).log"
        try env.waitUntil("the app's first line") {
            ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").contains("chatty started")
        }
        defer {
            // The handler ends before the scheduler: its trap completes the task.
            _ = try? env.bgctl("simulate-expiration", identifier)
            try? env.waitUntil("the handler to finish") { try env.tasks().isEmpty }
        }

        let command = "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); sleep 60"
        let tmux = try TmuxSession(command: command, width: 100, height: 30)
        try tmux.waitFor("Running handlers (1)")
        tmux.send("2")
        tmux.send("o")
        // Opened at the launch's marker line, with the handler's output under it.
        let opened = try tmux.waitFor("--- bgtaskd: launch \(app)-")
        #expect(opened.contains("logs/\(app).log"))
        try tmux.waitFor("chatty started \(app)-")
        try tmux.waitFor("following")

        var delays: [Double] = []
        for index in 1...3 {
            let line = "appended from outside \(index)"
            let start = Date()
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
            try handle.seekToEnd()
            try handle.write(contentsOf: Data((line + "\n").utf8))
            try handle.close()
            try tmux.waitFor(line, timeout: 1)
            delays.append(Date().timeIntervalSince(start))
        }
        print("log pager: append to screen \(delays.map { String(format: "%.0f ms", $0 * 1000) }.joined(separator: ", "))")

        // Esc closes the pager; the panels are back.
        tmux.send("Escape")
        try tmux.waitFor("Running handlers (1)")
        tmux.send("q")
        try tmux.waitForScreen("bgtop to exit") { !$0.contains("Running handlers") }
    }
}
