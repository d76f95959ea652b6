import Foundation
import TaskState
import TestSupport
import Testing

/// The numeric-bounds table, kept as code: every numeric `bgctl` option and every numeric command
/// field, each tried with hostile values. The client must refuse a bad value with exit 2 and one
/// line, writing nothing; the same values written straight into the inbox must be refused by the
/// scheduler with a reason while it keeps running. The ranges are `NumericBounds` (documented in
/// docs/cli.md and docs/state-format.md#numbers).
@Suite struct NumericBoundsTests {
    static let app = "com.example.numbers"

    /// Values every number is tried with (as typed after `--option=`).
    static let hostile = ["0", "-1", "1e300", "-1e300", "nan", "inf", "-inf", "-0", "12abc", "", "0x10",
                          "99999999999999999999", " 5", "1,5"]

    /// A numeric option: the command line without it, and the hostile values it accepts (in range).
    struct Option: CustomStringConvertible {
        var arguments: [String]
        var option: String
        /// Put before each value (`+` for `--earliest +SECONDS`).
        var prefix = ""
        var accepted: Set<String> = []
        var values: [String] = NumericBoundsTests.hostile

        var description: String { "\(arguments.prefix(2).joined(separator: " ")) \(option)" }
    }

    static let options: [Option] = {
        let submit = ["submit", "--app", app, "--id", "\(app).refresh", "--kind", "refresh"]
        let download = ["transfer", "download", "--app", app, "--id", "bounds", "http://127.0.0.1:9/bounds.bin"]
        let upload = ["transfer", "upload", "--app", app, "--id", "bounds", "http://127.0.0.1:9/up", "/dev/null"]
        let dates = ["9999-12-31T00:00:00Z", "+10000-01-01T00:00:00Z", "1900-01-01T00:00:00Z", "2040-01-01T00:00:00Z",
                     "nan", "2026-13-45T00:00:00Z"]
        return [
            Option(arguments: submit, option: "--earliest", prefix: "+", accepted: ["0"]),
            Option(arguments: submit, option: "--earliest", values: dates),
            Option(arguments: download, option: "--earliest", prefix: "+", accepted: ["0"]),
            Option(arguments: download, option: "--earliest", values: dates),
            Option(arguments: download, option: "--request-timeout"),
            Option(arguments: download, option: "--resource-timeout"),
            Option(arguments: download, option: "--expected-bytes", accepted: ["0"]),
            Option(arguments: upload, option: "--request-timeout"),
            Option(arguments: upload, option: "--resource-timeout"),
            Option(arguments: upload, option: "--expected-bytes", accepted: ["0"]),
            Option(arguments: ["begin-finishing", "--app", app], option: "--pid"),
            Option(arguments: ["events"], option: "--limit", accepted: ["0"]),
        ]
    }()

    @Test(arguments: options)
    func theClientRefusesEveryBadNumberWithExitTwoAndOneLine(_ option: Option) throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: ["\(Self.app).refresh"], script: "exit 0\n")
        for value in option.values {
            let argument = "\(option.option)=\(option.prefix)\(value)"
            let before = (try? Inbox(paths: env.paths).waiting().count) ?? 0
            let result = try env.run(TestEnvironment.binaries + "/bgctl",
                                     option.arguments + [argument, "--state", env.state, "--config", env.config])
            if option.accepted.contains(value) {
                #expect(result.status == 0, "\(option) \(argument) is in range: \(result)")
                continue
            }
            #expect(result.status == 2, "\(argument): \(result)")
            // ArgumentParser itself answers an empty value ("Missing value for '--pid <pid>'").
            #expect(result.stderr.hasPrefix("bgctl: bad \(option.option)")
                    || (value.isEmpty && result.stderr.hasPrefix("bgctl: ") && result.stderr.contains(option.option)),
                    "\(argument): \(result)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(argument): \(result)")
            #expect((try? Inbox(paths: env.paths).waiting().count) ?? 0 == before, "\(argument) wrote nothing")
        }
    }

    /// A numeric command field: the command it belongs to, and raw JSON values to put in it.
    struct Field: CustomStringConvertible {
        var type: String
        var field: String
        /// The rest of the command, as JSON members.
        var rest: String
        /// Raw JSON values the scheduler accepts (the controls that show the check is not refusing everything).
        var accepted: [String]
        var refused: [String]

        var description: String { "\(type).\(field)" }
    }

    static let numbers = ["0", "-1", "1e300", "-1e300", "NaN", "Infinity", "-0", "\"12\"", "1e400", "true",
                          "99999999999999999999", "\"1e300\"", "1.5e9", "null"]

    /// `pid` is a live process that is not the test runner (a finishing task's pid is signalled at expiry).
    static func fields(pid: Int32) -> [Field] {
        let now = Date()
        let future = "\"\(JSONFormat.string(from: now.addingTimeInterval(3600)))\""
        let dates = ["\"+10000-01-01T00:00:00Z\"", "\"9999-12-31T23:59:59Z\"", "\"0001-01-01T00:00:00Z\"", "\"nan\"", "1e300",
                     "\"2026-13-45T00:00:00Z\"", "\"\"", "0"]
        func download(_ id: String) -> String {
            "\"app\":\"\(app)\",\"identifier\":\"\(id)\",\"direction\":\"download\",\"url\":\"http://127.0.0.1:9/x\",\"destination\":\"\(id)\""
        }
        let upload = "\"app\":\"\(app)\",\"identifier\":\"up\",\"direction\":\"upload\",\"url\":\"http://127.0.0.1:9/up\",\"sourceFile\":\"/dev/null\""
        let submit = "\"app\":\"\(app)\",\"identifier\":\"\(app).refresh\",\"kind\":\"appRefresh\""
        // `null` leaves an optional field out, which is fine.
        let optional = numbers.filter { $0 != "null" }
        // 1.5e9 is a whole number, and in range for a byte count.
        let zeroOK = optional.filter { $0 != "0" && $0 != "-0" && $0 != "1.5e9" }
        return [
            Field(type: "transferCreate", field: "timeoutIntervalForRequest", rest: download("rq"), accepted: ["60"], refused: optional),
            Field(type: "transferCreate", field: "timeoutIntervalForResource", rest: download("rs"), accepted: ["604800"], refused: optional),
            Field(type: "transferCreate", field: "countOfBytesClientExpectsToReceive", rest: download("cb"),
                  accepted: ["0"], refused: zeroOK),
            Field(type: "transferCreate", field: "countOfBytesClientExpectsToSend", rest: upload, accepted: ["0"], refused: zeroOK),
            Field(type: "transferCreate", field: "earliestBeginDate", rest: download("eb"), accepted: [future], refused: dates),
            Field(type: "submit", field: "earliestBeginDate", rest: submit, accepted: [future], refused: dates),
            Field(type: "beginFinishing", field: "pid", rest: "\"app\":\"\(app)\"", accepted: ["\(pid)"], refused: numbers),
            Field(type: "attach", field: "pid", rest: "\"app\":\"\(app)\",\"identifiers\":[]", accepted: ["\(pid)"], refused: numbers),
            Field(type: "detach", field: "pid", rest: "\"app\":\"\(app)\"", accepted: ["\(pid)"], refused: numbers),
            Field(type: "cancelAll", field: "issuerPID", rest: "\"app\":\"\(app)\"", accepted: ["\(pid)"],
                  refused: optional),
            Field(type: "cancelAll", field: "issuedAt", rest: "\"app\":\"\(app)\"", accepted: [], refused: dates),
        ]
    }

    @Test func theSchedulerRefusesEveryBadNumberInTheInboxAndKeepsRunning() async throws {
        let env = try TestEnvironment()
        // The app runs /bin/sleep, so the sleeper below is a process of the app that the scheduler
        // accepts for attach and begin-finishing (it signals no other, see SignalTargetTests).
        try env.writeJSON(["id": Self.app, "executable": "/bin/sleep", "arguments": ["0"],
                           "permittedIdentifiers": ["\(Self.app).refresh"], "backgroundModes": ["fetch", "processing"]],
                          to: "\(env.config)/apps/\(Self.app).json")
        // The accepted begin-finishing makes the sleeper a finishing task's process: its budget is
        // an hour, so it is not expired (the sleeper signalled and killed) before the later attach
        // and detach name the sleeper, however late a busy machine lets the test get to them.
        try env.writeSettings(["finishingBudgetSeconds": 3600])
        let sleeper = try Spawn.start("/bin/sleep", ["3600"], environment: [:], stdout: "/dev/null", stderr: "/dev/null")
        defer {
            kill(sleeper, SIGKILL)
            _ = Spawn.wait(sleeper)
        }
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        var expectations: [(id: String, what: String, refused: Bool)] = []
        for field in Self.fields(pid: sleeper) {
            for (value, refused) in field.accepted.map({ ($0, false) }) + field.refused.map({ ($0, true) }) {
                let id = Command.newID()
                let issuedAt = field.field == "issuedAt" ? value : "\"\(JSONFormat.string(from: Date()))\""
                let member = field.field == "issuedAt" ? "" : ",\"\(field.field)\":\(value)"
                let text = "{\"id\":\"\(id)\",\"issuedAt\":\(issuedAt),\"type\":\"\(field.type)\",\(field.rest)\(member)}"
                try writeRaw(env, id: id, text)
                expectations.append((id, "\(field) = \(value)", refused))
                // One at a time, so a refusal cannot be mistaken for an effect of its neighbour.
                try await env.eventually("the outcome of \(field) = \(value)") {
                    StateFiles.exists(env.paths.outcome(id)) || !daemon.isRunning
                }
                try #require(daemon.isRunning, "bgtaskd died on \(field) = \(value):\n\(daemon.log.suffix(2000))")
            }
        }
        for expectation in expectations {
            let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(expectation.id)))
            if expectation.refused {
                #expect(outcome.error?.name == "invalidCommand", "\(expectation.what): \(outcome)")
                #expect(outcome.error?.message.isEmpty == false, "\(expectation.what) says why")
            } else {
                #expect(outcome.error == nil, "\(expectation.what) is in range: \(outcome)")
            }
        }
        let refusals = env.events(.refused).count + env.events(.commandRejected).count
        #expect(refusals == expectations.filter(\.refused).count, "each refusal is in the event log")
        #expect(daemon.isRunning)
        #expect(try env.bgctl("status").status == 0)
    }

    @Test func theSchedulerNamesTheFieldAndItsRange() async throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: ["\(Self.app).refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let id = Command.newID()
        try writeRaw(env, id: id, """
            {"id":"\(id)","issuedAt":"\(JSONFormat.string(from: Date()))","type":"transferCreate","app":"\(Self.app)",\
            "identifier":"huge","direction":"download","url":"http://127.0.0.1:9/x","destination":"huge",\
            "timeoutIntervalForResource":1e300}
            """)
        try await env.eventually("the outcome") { StateFiles.exists(env.paths.outcome(id)) || !daemon.isRunning }
        try #require(daemon.isRunning, "bgtaskd died on timeoutIntervalForResource 1e300:\n\(daemon.log.suffix(2000))")
        let outcome = try JSONFormat.decode(CommandOutcome.self, from: try StateFiles.read(env.paths.outcome(id)))
        #expect(outcome.error?.message == "bad timeoutIntervalForResource '1e+300': expected a number of seconds from 1 to 31536000")
        // And it still restarts cleanly: nothing of the command is left to trip over.
        #expect(daemon.stop() == 0)
        let again = try env.startDaemon()
        defer { again.stop() }
        #expect(again.isRunning)
    }

    /// Writes `text` as the command `id` into the inbox, Maildir-style, bypassing `Command`.
    private func writeRaw(_ env: TestEnvironment, id: String, _ text: String) throws {
        let temporary = "\(env.state)/inbox/tmp/\(id).json"
        try FileManager.default.createDirectory(atPath: "\(env.state)/inbox/tmp", withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, "\(env.paths.inboxNew)/\(id).json") == 0)
    }
}
