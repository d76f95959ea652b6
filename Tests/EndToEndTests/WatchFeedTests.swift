import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgctl watch --json`, the feed `bgtop --host` reads over ssh: a real `bgctl` on pipes beside
/// a real `bgtaskd`.
@Suite struct WatchFeedTests {
    private func weatherApp(_ env: TestEnvironment) throws {
        try env.addApp("com.example.weather", identifiers: ["com.example.weather.refresh", "com.example.weather.sync"],
                       script: "sleep 30 & wait $!\n")
    }

    private func requestIDs(_ change: [String: Any]) -> [String] {
        ((change["requests"] as? [String: Any])?["set"] as? [[String: Any]] ?? []).compactMap { $0["identifier"] as? String }
    }

    @Test func aSnapshotThenAChangeWhenARequestIsSubmitted() throws {
        let env = try TestEnvironment()
        try weatherApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let watch = try FeedProcess(env)
        defer { watch.end() }

        let snapshot = try watch.nextLine()
        #expect(snapshot["type"] as? String == "snapshot")
        #expect(snapshot["version"] as? Int == 1)
        #expect(snapshot["stateDirectory"] as? String == env.state)
        #expect((snapshot["schedulerPID"] as? Int).map(Int32.init) == daemon.pid)
        #expect((snapshot["requests"] as? [Any])?.isEmpty == true)
        #expect(snapshot["settings"] is [String: Any])
        let manifests = snapshot["manifests"] as? [[String: Any]] ?? []
        #expect(manifests.map { $0["id"] as? String } == ["com.example.weather"])
        #expect((snapshot["events"] as? [[String: Any]])?.contains { $0["type"] as? String == "daemonStarted" } == true)

        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        let change = try watch.next("change") { self.requestIDs($0) == ["com.example.weather.refresh"] }
        #expect(change["version"] == nil)
        // The scheduler's event for it comes in the same line or a later one.
        func submittedEvent(_ line: [String: Any]) -> Bool {
            (line["events"] as? [[String: Any]] ?? []).contains { $0["type"] as? String == "submitted" }
        }
        if !submittedEvent(change) { _ = try watch.next("change", where: submittedEvent) }

        // The scheduler's exit is a change of its own.
        daemon.stop()
        let stopped = try watch.next("change") { ($0["cleared"] as? [String])?.contains("schedulerPID") == true }
        #expect(stopped["schedulerPID"] == nil)
    }

    @Test func aCommandRequestIsSentAndAnswered() throws {
        let env = try TestEnvironment()
        try weatherApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let watch = try FeedProcess(env)
        defer { watch.end() }
        _ = try watch.next("snapshot")

        watch.write(#"{"type":"command","id":"r1","command":{"type":"submit","app":"com.example.weather","identifier":"com.example.weather.sync","kind":"processing","earliestBeginDate":"2030-01-01T00:00:00Z"}}"# + "\n")
        let result = try watch.next("result")
        #expect(result["id"] as? String == "r1")
        #expect(result["status"] as? String == "applied", "\(result)")
        #expect(try env.requests().contains { $0["identifier"] as? String == "com.example.weather.sync" })
        _ = try watch.next("change") { self.requestIDs($0).contains("com.example.weather.sync") }

        // Refused by the scheduler as bgctl would be: the outcome's error in the answer.
        watch.write(#"{"type":"command","id":"r2","command":{"type":"submit","app":"com.example.weather","identifier":"com.example.other","kind":"processing"}}"# + "\n")
        let refused = try watch.next("result")
        #expect(refused["id"] as? String == "r2")
        #expect(refused["status"] as? String == "refused")
        #expect((refused["error"] as? [String: Any])?["name"] as? String == "notPermitted", "\(refused)")

        // A simulated launch goes through and the scheduler launches.
        watch.write(#"{"type":"command","id":"r3","command":{"type":"simulateLaunch","identifier":"com.example.weather.sync","app":"com.example.weather"}}"# + "\n")
        #expect(try watch.next("result")["status"] as? String == "applied")
        try env.waitUntil("the simulated launch") {
            env.events(.launched).contains { $0.identifier?.rawValue == "com.example.weather.sync" && $0.reason == "simulated" }
        }
        _ = try watch.next("change") { line in
            ((line["tasks"] as? [String: Any])?["set"] as? [[String: Any]] ?? []).contains { $0["identifier"] as? String == "com.example.weather.sync" }
        }
    }

    /// The pager of a `bgtop --host`: a part of an app's log read on the watched machine, and a
    /// line each time the followed log grows.
    @Test func aLogIsReadAndFollowedOverTheFeed() throws {
        let env = try TestEnvironment()
        let logs = env.state + "/logs"
        try FileManager.default.createDirectory(atPath: logs, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let log = logs + "/com.example.weather.log"
        try Data("first line\nsecond line\n".utf8).write(to: URL(fileURLWithPath: log))
        let watch = try FeedProcess(env)
        defer { watch.end() }
        _ = try watch.next("snapshot")

        watch.write(#"{"type":"log","id":"l1","request":{"app":"com.example.weather","position":{"end":{}},"maximumLines":10,"serial":7}}"# + "\n")
        let answer = try watch.next("log")
        #expect(answer["id"] as? String == "l1")
        let excerpt = try #require(answer["excerpt"] as? [String: Any])
        #expect(excerpt["serial"] as? Int == 7)
        let texts = (excerpt["lines"] as? [[String: Any]] ?? []).compactMap { $0["text"] as? String }
        #expect(texts == ["first line", "second line"], "\(answer)")

        watch.write(#"{"type":"follow","app":"com.example.weather"}"# + "\n")
        // The follow is in place once a request sent after it is answered.
        watch.write(#"{"type":"log","id":"l2","request":{"app":"com.example.weather","position":{"end":{}},"maximumLines":1,"serial":8}}"# + "\n")
        _ = try watch.next("log", where: { $0["id"] as? String == "l2" })
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("third line\n".utf8))
        try handle.close()
        let changed = try watch.next("logChanged")
        #expect(changed["app"] as? String == "com.example.weather")

        // A log that is not a regular file is refused in the excerpt, and the feed goes on.
        try FileManager.default.createSymbolicLink(atPath: logs + "/com.example.other.log", withDestinationPath: "/etc/passwd")
        watch.write(#"{"type":"log","id":"l3","request":{"app":"com.example.other","position":{"end":{}},"maximumLines":10,"serial":9}}"# + "\n")
        let refused = try watch.next("log", where: { $0["id"] as? String == "l3" })
        let other = try #require(refused["excerpt"] as? [String: Any])
        #expect(other["problem"] as? String != nil, "\(refused)")
        #expect((other["lines"] as? [Any] ?? []).isEmpty)
    }

    @Test func badRequestLinesGetAnErrorLineAndTheFeedGoesOn() throws {
        let env = try TestEnvironment()
        try weatherApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let watch = try FeedProcess(env)
        defer { watch.end() }
        _ = try watch.next("snapshot")

        let hostile: [(String, String)] = [
            ("{not json\n", "malformed"),
            ("[1,2,3]\n", "malformed"),
            (#"{"type":"shell","id":"x1","command":"rm -rf /"}"# + "\n", "unknownType"),
            (#"{"type":"command","id":"a b"}"# + "\n", "malformed"),
            (#"{"type":"command","id":"x2","command":{"type":"cancel","app":"../../etc","identifier":"passwd"}}"# + "\n", "malformed"),
            (#"{"type":"command","id":"x3","command":{"type":"attach","app":"com.example.weather","pid":1,"identifiers":[]}}"# + "\n", "refused"),
            (#"{"type":"command","id":"x4","command":{"type":"clearConditions","launchToken":"forged"}}"# + "\n", "refused"),
            (String(repeating: "[", count: 30_000) + "\n", "malformed"),
            (String(repeating: "x", count: 200_000) + "\n", "tooLong"),
        ]
        for (line, code) in hostile {
            watch.write(line)
            let error = try watch.next("error")
            #expect(error["code"] as? String == code, "\(line.prefix(60)): \(error)")
            #expect((error["message"] as? String)?.isEmpty == false)
        }
        // Bytes that are not UTF-8, then a valid request: still answered.
        watch.write(Data([0xff, 0xfe, 0x0a]))
        #expect(try watch.next("error")["code"] as? String == "malformed")
        watch.write(#"{"type":"command","id":"ok","command":{"type":"submit","app":"com.example.weather","identifier":"com.example.weather.refresh","kind":"appRefresh","earliestBeginDate":"2030-01-01T00:00:00Z"}}"# + "\n")
        let answer = try watch.next("result")
        #expect(answer["id"] as? String == "ok" && answer["status"] as? String == "applied", "\(answer)")
        // None of the refused lines reached the scheduler.
        #expect(env.events(.commandRejected).isEmpty)
        #expect(try env.requests().count == 1)
        #expect(watch.waitForExit(timeout: 0) == nil, "the watch is still running")
    }

    @Test func theWatchEndsWhenItsReaderGoesAway() throws {
        let env = try TestEnvironment()
        try weatherApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // EPIPE: the reader closed its end; the next change cannot be written.
        let piped = try FeedProcess(env)
        defer { piped.end() }
        _ = try piped.next("snapshot")
        piped.closeOutput()
        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        #expect(piped.waitForExit(timeout: 10) == 0, "stderr: \(piped.stderr)")
        #expect(piped.stderr.isEmpty)

        // A closed stdin (ssh's session ended) ends it as well.
        let closed = try FeedProcess(env)
        defer { closed.end() }
        _ = try closed.next("snapshot")
        closed.closeInput()
        #expect(closed.waitForExit(timeout: 10) == 0, "stderr: \(closed.stderr)")
    }

    @Test func withoutJSONAPersonReadsALinePerChange() throws {
        let env = try TestEnvironment()
        try weatherApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let path = "\(env.root)/watch.out"
        let pid = try Spawn.start(TestEnvironment.binaries + "/bgctl", ["watch", "--state", env.state, "--config", env.config],
                                  environment: BoundedProcess.environment, stdout: path, stderr: path + ".err")
        defer { BoundedProcess.end(pid) }
        func text() -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }
        try env.waitUntil("the first line") { text().contains("watching \(env.state)") }
        #expect(try env.bgctl("submit", "--app", "com.example.weather", "--id", "com.example.weather.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        // The commit writes the request before it appends the event: the watch may show them in two lines.
        try env.waitUntil("a line for the submit") {
            text().contains("requests written: com.example.weather/com.example.weather.refresh") && text().contains("submitted")
        }
        #expect(text().contains("submitted"))
    }

    /// A reader that stops reading costs the watch no growing queue: while stdout is full, changes
    /// gather in its mirror and the next line carries all of them. Here the test stands in for the
    /// scheduler and rewrites 200 request files (about 1 KB each, so one change line overfills a
    /// pipe) 40 times without reading: one line fills the pipe, and one more carries the rest
    /// (a watch that went on making lines while blocked wrote 14 here).
    @Test func aSlowReaderGetsTheChangesCoalesced() throws {
        let env = try TestEnvironment()
        let watch = try FeedProcess(env)
        defer { watch.end() }
        _ = try watch.next("snapshot")
        let app = try Identifier(validating: "com.example.bulk")
        try FileManager.default.createDirectory(atPath: "\(env.paths.requests)/\(app)", withIntermediateDirectories: true)
        let rounds = 40
        for round in 1...rounds {
            for index in 0..<200 {
                let request = PendingRequest(app: app, identifier: try Identifier(validating: "com.example.bulk.r\(index)"), kind: .processing,
                                             submittedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(round)),
                                             commandID: String(repeating: "c", count: 1000))
                try StateFiles.write(try JSONFormat.encode(request), to: env.paths.request(request.key), durable: false)
            }
        }
        // Only now is anything read: every line up to the one that shows the last round.
        var changeLines = 0
        var submitted: [String: String] = [:]
        while submitted.count < 200 || Set(submitted.values) != [JSONFormat.string(from: Date(timeIntervalSince1970: 1_800_000_000 + Double(rounds)))] {
            let change = try watch.next("change", timeout: 20)
            changeLines += 1
            for record in (change["requests"] as? [String: Any])?["set"] as? [[String: Any]] ?? [] {
                if let id = record["identifier"] as? String, let date = record["submittedAt"] as? String { submitted[id] = date }
            }
        }
        #expect(changeLines <= 4, "\(changeLines) change lines for \(rounds) rounds of changes")
        #expect(watch.waitForExit(timeout: 0) == nil)
    }
}
