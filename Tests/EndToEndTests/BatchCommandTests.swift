import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgctl batch`: command lines from standard input, checked all before any is sent, applied in
/// their order, each at most once and acknowledged only once durable.
@Suite struct BatchCommandTests {
    static let app = "com.example.batch"
    static let identifiers = (0..<10).map { "com.example.batch.job\($0)" }

    /// Runs `bgctl batch` with `lines` on its standard input.
    static func batch(_ env: TestEnvironment, _ lines: [String], options: String = "") throws -> TestEnvironment.Result {
        let input = "\(env.root)/batch-\(UUID().uuidString).txt"
        try (lines.joined(separator: "\n") + "\n").write(toFile: input, atomically: true, encoding: .utf8)
        return try env.run("/bin/sh", ["-c", "exec '\(TestEnvironment.binaries)/bgctl' batch --state '\(env.state)' --config '\(env.config)' \(options) < '\(input)'"])
    }

    /// Five hundred lines: each identifier submitted again and again, and every submit of job1
    /// followed by its cancel; the last submit of job0 has its own date.
    static func orderedLines() -> [String] {
        var lines = ["# submits and cancels, in order", ""]
        for round in 0..<166 {
            lines.append("submit --app \(app) --id \(identifiers[0]) --kind processing --earliest +\(3600 + round)")
            lines.append("submit --app \(app) --id '\(identifiers[1])' --kind refresh --earliest +3600")
            lines.append("cancel --app \(app) --id \"\(identifiers[1])\"")
        }
        lines.append("submit --app \(app) --id \(identifiers[0]) --kind processing --earliest +86400")
        return lines
    }

    static func checkOrderedState(_ env: TestEnvironment) throws {
        let requests = StateSnapshot.load(env.paths).requests
        #expect(requests.map(\.identifier.rawValue) == [identifiers[0]], "every submit of job1 was followed by its cancel")
        let begin = try #require(requests.first?.earliestBeginDate)
        #expect(begin.timeIntervalSinceNow > 80_000, "the last submit won: \(begin)")
    }

    @Test func fiveHundredLinesAreAppliedInOrderEachOnceDurable() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let result = try Self.batch(env, Self.orderedLines())
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.split(separator: "\n").count == 499, "one message per command")
        try Self.checkOrderedState(env)
        #expect(env.events(.submitted).count + env.events(.replaced).count == 333)
        #expect(env.events(.cancelled).count == 166)
        #expect(try Inbox(paths: env.paths).waiting().isEmpty, "all went over the command socket")
    }

    @Test func withNoSchedulerTheLinesWaitInTheInboxInTheirOrder() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let result = try Self.batch(env, Self.orderedLines())
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("queued: 499 command(s)"), "\(result.stdout)")
        #expect(try Inbox(paths: env.paths).waiting().count == 499)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("the inbox to be applied", timeout: 600) { try Inbox(paths: env.paths).waiting().isEmpty }
        try Self.checkOrderedState(env)
    }

    @Test func oneBadLineSendsNothing() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let good = "submit --app \(Self.app) --id \(Self.identifiers[2]) --kind refresh"
        let cases: [(String, String)] = [
            ("submit --app \(Self.app) --id '\(Self.identifiers[3])", "line 2: a quote is not closed"),
            ("status", "line 2: only submit, cancel and complete go in a batch"),
            ("submit --app \(Self.app) --kind refresh", "line 2: Missing expected argument '--id <id>'"),
            ("submit --app \(Self.app) --id \(Self.identifiers[3]) --kind refresh --state /tmp/elsewhere",
             "line 2: --state and --config go on bgctl batch, not on its lines"),
            ("submit --app ../x --id \(Self.identifiers[3]) --kind refresh", "line 2: bad app"),
            ("submit --help", "line 2: help and version requests are not taken on a batch line"),
            ("--version", "line 2: help and version requests are not taken on a batch line"),
            ("cancel --app \(Self.app) --id x\\", "line 2: the line ends with \\"),
            ("submit --app " + String(repeating: "a", count: 70_000), "line 2: longer than 65536 bytes"),
        ]
        for (bad, expected) in cases {
            let result = try Self.batch(env, [good, bad, good])
            #expect(result.status == 2, "\(bad): \(result)")
            #expect(result.stderr.contains(expected) && result.stderr.contains("nothing was sent"), "\(bad): \(result.stderr)")
        }
        // Bytes that are not UTF-8.
        let input = "\(env.root)/not-utf8.txt"
        try Data(Array((good + "\n").utf8) + [0x73, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: input))
        let binary = try env.run("/bin/sh", ["-c", "exec '\(TestEnvironment.binaries)/bgctl' batch --state '\(env.state)' --config '\(env.config)' < '\(input)'"])
        #expect(binary.status == 2 && binary.stderr.contains("line 2: not UTF-8 text; nothing was sent"), "\(binary)")
        #expect(env.events(.submitted).isEmpty && StateSnapshot.load(env.paths).requests.isEmpty, "nothing was applied")
        let window = try Self.batch(env, [good], options: "--in-flight 65")
        #expect(window.status == 2 && window.stderr.contains("--in-flight"), "\(window)")
    }

    /// Long batches are parsed in blocks of 512 lines, each on several threads: whichever thread
    /// or block a bad line falls in, and whatever else is wrong later, the first bad line is the
    /// one reported.
    @Test func amongManyLinesTheFirstBadOneIsReported() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let submits = (0..<530).map { "submit --app \(Self.app) --id \(Self.identifiers[$0 % 10]) --kind processing --earliest +\(3600 + $0)" }
        func lines(_ count: Int, _ bad: [Int: String]) -> [String] {
            (1...count).map { bad[$0] ?? "cancel --app \(Self.app) --id \(Self.identifiers[$0 % 10])" }
        }
        let unparsable = "submit --app \(Self.app) --id \(Self.identifiers[0]) --kind weekly"
        let cases: [([String], String)] = [
            // Both parsed, on different threads; the later one is found by the parser too.
            (lines(120, [10: unparsable, 100: "status"]), "line 10: "),
            // Refused while reading, after an unparsable line read before it.
            (lines(200, [150: unparsable, 180: "submit --app \(Self.app) --state /tmp/x"]), "line 150: "),
            // Only refused while reading: the lines before it are parsed first, and pass.
            (lines(200, [190: "submit --help"]), "line 190: help and version requests"),
            // In the second block of 512 lines.
            (lines(530, [520: unparsable, 525: "status"]), "line 520: "),
        ]
        for (input, expected) in cases {
            let result = try Self.batch(env, input)
            #expect(result.status == 2, "\(expected): \(result)")
            #expect(result.stderr.hasPrefix("bgctl: " + expected) && result.stderr.contains("nothing was sent"), "\(expected): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        }
        #expect(env.events(.cancelled).isEmpty && env.events(.submitted).isEmpty, "nothing was applied")
        let before = Date()
        let all = try Self.batch(env, submits)
        #expect(all.status == 0, "\(all)")
        #expect(all.stdout.split(separator: "\n").count == 530, "one message per command")
        let requests = StateSnapshot.load(env.paths).requests.sorted { $0.identifier.rawValue < $1.identifier.rawValue }
        #expect(requests.count == 10)
        // The last line of each identifier won, across both blocks: lines 521...530 in order.
        for (offset, request) in requests.enumerated() {
            let late = try #require(request.earliestBeginDate).timeIntervalSince(before) - Double(3600 + 520 + offset)
            #expect(late >= -0.01 && late < 5, "\(request.identifier): \(late) s from line \(521 + offset)'s date")
        }
    }

    @Test func aRefusedLineIsReportedByNumberAndTheOthersAreApplied() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: Self.identifiers, script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let result = try Self.batch(env, [
            "submit --app \(Self.app) --id \(Self.identifiers[4]) --kind processing --earliest +3600",
            "submit --app \(Self.app) --id com.example.batch.notpermitted --kind processing --earliest +3600",
            "submit --app \(Self.app) --id \(Self.identifiers[5]) --kind processing --earliest +3600",
            "submit --app \(Self.app) --id \(Self.identifiers[6]) --kind processing --earliest +864000",
        ])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("line 2: notPermitted:"), "\(result.stderr)")
        #expect(Set(StateSnapshot.load(env.paths).requests.map(\.identifier.rawValue)) == [Self.identifiers[4], Self.identifiers[5], Self.identifiers[6]])
        #expect(result.stderr.contains("line 4: warning: earliestBeginDate of \(Self.identifiers[6]) is 10 days ahead"), "the advice bgctl submit gives: \(result.stderr)")
    }
}
