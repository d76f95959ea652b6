import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Text a client sent (a finishing task's name, a transfer's URL and destination, an identifier
/// echoed in a refusal) reaches the terminal from `bgctl` with its control characters written
/// out; `--json` keeps it exact, in JSON's own escaping.
@Suite struct TerminalEscapeTests {
    /// Colour, a window title, a cursor move by C1 CSI, and line breaks: what a client could use
    /// to drive the reader's terminal or forge output lines.
    static let hostile = "\u{1b}[31mRED\u{1b}]0;owned\u{07}\nforged\rover\tnext\u{9b}2J\u{7f}"
    static let escaped = #"\x1b[31mRED\x1b]0;owned\x07\nforged\rover\tnext\x9b2J\x7f"#

    /// Bytes no field may put on a terminal: ESC, BEL, CR, DEL and C1 CSI (UTF-8 C2 9B).
    static func rawControls(in text: String) -> [String] {
        var found: [String] = []
        for scalar in text.unicodeScalars where scalar != "\n" {
            if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) { found.append(String(scalar.value, radix: 16)) }
        }
        return found
    }

    /// An app whose executable is `/bin/sleep`, so that a `sleep` the test starts may be named in
    /// `begin-finishing` (the scheduler signals only the app's own processes), with a finishing
    /// budget no loaded machine runs out of.
    static func addSleepingApp(_ env: TestEnvironment, _ app: String) throws {
        try env.writeSettings(["finishingBudgetSeconds": 600])
        try env.writeJSON(["id": app, "executable": "/bin/sleep", "arguments": ["300"],
                           "permittedIdentifiers": ["\(app).refresh"], "backgroundModes": ["fetch"]],
                          to: "\(env.config)/apps/\(app).json")
    }

    @Test func clientTextIsEscapedInTextOutputAndExactInJSON() throws {
        let env = try TestEnvironment()
        let app = "com.example.hostile"
        try Self.addSleepingApp(env, app)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let worker = try Spawn.start("/bin/sleep", ["300"], environment: [:], stdout: "/dev/null", stderr: "/dev/null")
        defer {
            kill(worker, SIGKILL)
            _ = Spawn.wait(worker)
        }
        let watchPath = env.root + "/watch.out"
        let watcher = try Spawn.start(TestEnvironment.binaries + "/bgctl", ["watch", "--state", env.state, "--config", env.config],
                                      environment: ProcessInfo.processInfo.environment, stdout: watchPath, stderr: watchPath + ".err")
        defer {
            kill(watcher, SIGTERM)
            _ = Spawn.wait(watcher)
        }
        try env.waitUntil("bgctl watch to start") {
            ((try? String(contentsOfFile: watchPath, encoding: .utf8)) ?? "").contains("watching")
        }

        // A finishing task's name.
        let begin = try env.bgctl("begin-finishing", "--app", app, "--name", Self.hostile, "--pid", "\(worker)")
        #expect(begin.status == 0, "\(begin)")
        // A transfer's URL and destination (the URL is kept as sent; the engine encodes it).
        let url = "http://127.0.0.1:9/\(Self.hostile)"
        let download = try env.bgctl("transfer", "download", "--app", app, "--id", "\(app).file", "--earliest", "+3600",
                                     "--to", Self.hostile, url)
        #expect(download.status == 0, "\(download)")
        #expect(download.stdout.contains(Self.escaped) && Self.rawControls(in: download.stdout).isEmpty, "\(download)")
        #expect(download.stdout.split(separator: "\n").count == 1, "\(download)")

        // Refusals echo what was sent: by bgctl (a bad identifier) and by the scheduler (a bad destination).
        let badID = try env.bgctl("submit", "--app", app, "--id", "\(app).\(Self.hostile)", "--kind", "refresh")
        #expect(badID.status == 2, "\(badID)")
        #expect(Self.rawControls(in: badID.stderr).isEmpty && badID.stderr.split(separator: "\n").count == 1, "\(badID)")
        #expect(badID.stderr.contains(#"\x1b[31mRED"#), "\(badID)")
        let badDestination = try env.bgctl("transfer", "download", "--app", app, "--id", "\(app).other", "--to", "a/\(Self.hostile)",
                                           "http://127.0.0.1:9/x")
        #expect(badDestination.status == 1, "\(badDestination)")
        #expect(badDestination.stderr.hasPrefix("bgctl: invalidCommand: ") && badDestination.stderr.contains("a/" + Self.escaped), "\(badDestination)")
        #expect(Self.rawControls(in: badDestination.stderr).isEmpty && badDestination.stderr.split(separator: "\n").count == 1, "\(badDestination)")

        // list: the URL column.
        let list = try env.bgctl("list")
        #expect(list.status == 0)
        #expect(Self.rawControls(in: list.stdout).isEmpty, "\(list.stdout)")
        #expect(list.stdout.contains("http://127.0.0.1:9/" + Self.escaped), "\(list.stdout)")

        // events: one line per event, each field escaped.
        let events = try env.bgctl("events", "--limit", "50")
        #expect(Self.rawControls(in: events.stdout).isEmpty, "\(events.stdout)")
        let lines = events.stdout.split(separator: "\n")
        let named = lines.filter { $0.contains("began finishing task") }
        #expect(named.count == 1 && named[0].hasSuffix("(\(Self.escaped))"), "\(events.stdout)")
        #expect(lines.contains { $0.contains("refused") && $0.contains("a/" + Self.escaped) }, "\(events.stdout)")
        #expect(lines.allSatisfy { $0.hasPrefix("20") }, "every line starts with its event's time: \(events.stdout)")

        // events --json: JSON, with the text exactly as sent.
        let json = try env.bgctl("events", "--json", "--limit", "50")
        let decoded = EventLog.decodeLines(Data(json.stdout.utf8)).events
        #expect(decoded.contains { $0.message.hasSuffix("(\(Self.hostile))") }, "\(json.stdout)")
        #expect(!json.stdout.unicodeScalars.contains("\u{1b}"), "JSON escapes control characters its own way")

        // watch (text): the new events, escaped.
        try env.waitUntil("bgctl watch to show the refusal") {
            ((try? String(contentsOfFile: watchPath, encoding: .utf8)) ?? "").contains("a/" + Self.escaped)
        }
        let watched = try String(contentsOfFile: watchPath, encoding: .utf8)
        #expect(Self.rawControls(in: watched).isEmpty, "\(watched)")
        #expect(watched.contains("began finishing task") && watched.contains("(\(Self.escaped))"), "\(watched)")
    }
}
