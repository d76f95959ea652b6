import Foundation
import TaskState
import TestSupport
import Testing

/// App output in `logs/<app>.log`: rotated at its cap between runs (never under a writer), shown
/// by `bgctl logs` with each launch marked and control characters escaped, followed across
/// rotations; a log that cannot be used is an event, and the launch runs on.
@Suite struct AppLogTests {
    static let app = "com.example.chatty"
    static let identifier = "com.example.chatty.refresh"

    /// A handler that prints its launch, 3000 bytes and a line with an escape sequence, completes, exits.
    private func addChatty(_ env: TestEnvironment) throws {
        try env.addApp(Self.app, identifiers: [Self.identifier], script: """
            echo "run $BGTASK_LAUNCH_ID"
            printf 'x%.0s' $(seq 1 3000); echo
            printf 'esc \\033[31mred\\n'
            "$BGCTL" complete \(Self.identifier) --success >/dev/null
            """)
    }

    /// Launches the app once and waits until its process has exited.
    private func launchOnce(_ env: TestEnvironment) throws {
        let before = env.events(.completed).count
        #expect(try env.bgctl("submit", "--app", Self.app, "--id", Self.identifier, "--kind", "refresh", "--earliest", "+3600").status == 0)
        #expect(try env.bgctl("simulate-launch", Self.identifier).status == 0)
        try env.waitUntil("the launch to complete", timeout: 20) { env.events(.completed).count > before }
        // Its process is gone from the ledger once the scheduler has reaped it.
        try env.waitUntil("the launch's process to exit", timeout: 20) {
            let ledger = try JSONFormat.decode(ProcessLedger.self, from: try StateFiles.read(env.paths.processes))
            return ledger.processes.isEmpty
        }
    }

    private func contents(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    @Test func logsAreRotatedBetweenRunsAndShownWithEachLaunchMarked() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["appLogMaximumBytes": 4096, "appLogKeptFiles": 2])
        try addChatty(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        for _ in 0..<7 { try launchOnce(env) }
        let log = env.paths.appLog(try Identifier(validating: Self.app))
        let runs = { (path: String) in self.contents(path).split(separator: "\n").filter { $0.hasPrefix("run ") }.map { String($0.dropFirst(4)) } }
        let all = env.events(.launched).compactMap { event in event.logOffset.map { _ in event } }
        #expect(all.count == 7)
        // Launches 1–2 were dropped, 3–4 are in .2, 5–6 in .1, 7 in the current log.
        #expect(runs(log).count == 1)
        #expect(runs(log + ".1").count == 2)
        #expect(runs(log + ".2").count == 2)
        #expect(!FileManager.default.fileExists(atPath: log + ".3"))
        for path in [log, log + ".1", log + ".2"] {
            #expect(contents(path).hasPrefix(LogMarker.prefix), "each file starts with a launch: \(path)")
        }
        let newest = try #require(runs(log).first)

        let three = try env.bgctl("logs", Self.app, "--lines", "3")
        #expect(three.status == 0, "\(three)")
        let lines = three.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.first?.hasPrefix("── launch \(newest) · appRefresh \(Self.identifier) · ") == true, "\(lines)")
        #expect(lines.first?.hasSuffix("── (continued)") == true)
        #expect(lines[1] == "run \(newest)")
        #expect(lines.last == "esc ^[[31mred", "escaped: \(lines)")
        #expect(!three.stdout.utf8.contains(0x1B), "no raw ESC reaches the terminal")

        // More lines than the current file has: the rest come from the newest rotated file.
        let six = try env.bgctl("logs", Self.app, "--lines", "7")
        #expect(six.status == 0, "\(six)")
        let previous = try #require(runs(log + ".1").last)
        let shown = six.stdout.split(separator: "\n").map(String.init)
        #expect(shown.first?.hasPrefix("── launch \(previous) ") == true && shown.first?.hasSuffix("(continued)") == true, "\(shown)")
        #expect(shown.contains { $0.hasPrefix("── launch \(newest) ") && !$0.hasSuffix("(continued)") })
        #expect(shown.count == 8)

        let bad = try env.bgctl("logs", Self.app, "--lines", "many")
        #expect(bad.status == 2 && bad.stderr.contains("--lines"), "\(bad)")
        let none = try env.bgctl("logs", "com.example.silent")
        #expect(none.status == 1 && none.stderr.contains("no output yet"), "\(none)")
        let hostile = try env.bgctl("logs", "../etc")
        #expect(hostile.status == 2, "\(hostile)")
    }

    @Test func followShowsNewOutputAcrossARotation() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["appLogMaximumBytes": 4096, "appLogKeptFiles": 1])
        try addChatty(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let output = env.root + "/follow.out"
        let follower = try Spawn.start(TestEnvironment.binaries + "/bgctl",
                                       ["logs", Self.app, "--follow", "--state", env.state, "--config", env.config],
                                       environment: ProcessInfo.processInfo.environment, stdout: output, stderr: env.root + "/follow.err")
        defer {
            kill(follower, SIGKILL)
            _ = Spawn.wait(follower)
        }
        var ids: [String] = []
        for _ in 0..<4 {
            try launchOnce(env)
            let id = try #require(contents(env.paths.appLog(try Identifier(validating: Self.app)))
                .split(separator: "\n").last { $0.hasPrefix("run ") }.map { String($0.dropFirst(4)) })
            ids.append(id)
            try env.waitUntil("the follower to show run \(id)", timeout: 20) { contents(output).contains("run \(id)\n") }
        }
        #expect(FileManager.default.fileExists(atPath: env.paths.appLog(try Identifier(validating: Self.app)) + ".1"), "it rotated")
        let shownRuns = contents(output).split(separator: "\n").filter { $0.hasPrefix("run ") }.map { String($0.dropFirst(4)) }
        #expect(shownRuns == ids, "every run once, in order")
        #expect(contents(output).split(separator: "\n").filter { $0.hasPrefix("── launch ") }.count == 4)
        #expect(!contents(output).utf8.contains(0x1B))
    }

    @Test func aLogThatIsNotAFileIsAnEventAndTheLaunchRunsOn() throws {
        let env = try TestEnvironment()
        try addChatty(env)
        try FileManager.default.createDirectory(atPath: env.paths.logs + "/\(Self.app).log", withIntermediateDirectories: true)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try launchOnce(env)
        let problems = env.events(.appLogProblem)
        #expect(problems.count == 2, "\(problems.map(\.message))")
        #expect(problems.first?.message.contains("its log was not rotated") == true, "\(problems.map(\.message))")
        #expect(problems.last?.message.contains("cannot open logs/\(Self.app).log") == true, "\(problems.map(\.message))")
        #expect(problems.last?.message.hasSuffix("its output may be lost") == true)
        #expect(env.events(.completed).count == 1, "the launch ran and completed")
        #expect(daemon.isRunning)
    }
}
