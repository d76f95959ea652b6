import Foundation
import TaskState
import TestSupport
import Testing

/// Review of issue 17, item 1: a `resources.json` whose figures no monitor writes (CPU time past
/// any `Int`, CPU% and memory far out of range, 10 000 pids) beside a running task. The readers
/// used to turn the CPU time into an `Int` and trap; now the file is unreadable, said so, and
/// nothing crashes.
@Suite struct HostileResourceFiguresTests {
    private let app = HostileSession.probeApp
    private let launchID = "com.example.probe-1795341600000"

    /// A running task of the probe app, as the scheduler records it, joined to the report by launch.
    private func plantRunningTask(_ env: TestEnvironment) throws {
        let now = Date()
        let task = LaunchedTask(app: try Identifier(validating: app), identifier: try Identifier(validating: "\(app).job"),
                                kind: .processing, launchReason: "hostile figures", simulated: false, pid: 999_999,
                                processGroup: 999_999, processStartTicks: nil, launchID: launchID, startedAt: now,
                                deadline: now.addingTimeInterval(3600))
        try FileManager.default.createDirectory(atPath: "\(env.state)/tasks/\(app)", withIntermediateDirectories: true)
        try JSONFormat.encode(task).write(to: URL(fileURLWithPath: "\(env.state)/tasks/\(app)/\(app).job.json"))
    }

    private func plantReport(_ env: TestEnvironment, _ figures: String) throws {
        let pids = (1...10_000).map(String.init).joined(separator: ",")
        let report = #"{"version":1,"sampledAt":"2026-11-22T10:00:03.622Z","launches":[{"launchID":"\#(launchID)","app":"\#(app)","#
            + #""pids":[\#(pids)],\#(figures),"source":"proc","phase":"running","sampledAt":"2026-11-22T10:00:03.622Z"}]}"#
        try Data(report.utf8).write(to: URL(fileURLWithPath: env.paths.resources))
    }

    @Test(arguments: [
        #""cpuSeconds":9.3e18,"cpuPercent":97.5,"memoryBytes":1,"peakMemoryBytes":1"#,
        #""cpuSeconds":1,"cpuPercent":1e300,"memoryBytes":1,"peakMemoryBytes":1"#,
        #""cpuSeconds":1,"cpuPercent":1,"memoryBytes":9223372036854775807,"peakMemoryBytes":-9223372036854775808"#,
        #""cpuSeconds":-1e300,"memoryBytes":1,"peakMemoryBytes":1"#,
    ])
    func hostileFiguresBesideARunningTaskAreRefusedAndCrashNothing(_ figures: String) throws {
        let env = try TestEnvironment("hostilefigures")
        let session = try HostileSession(env)
        try plantRunningTask(env)
        try plantReport(env, figures)

        let batch = try session.bgtopBatch()
        #expect(batch.status == 0, "\(batch)")
        #expect(batch.stdout.contains("\(app).job"), "the running task is shown: \(batch.stdout)")
        #expect(batch.stdout.contains("resources.json"), "the file is named as unreadable: \(batch.stdout)")
        let list = try session.bgctl("list", "--json")
        #expect(list.status < 128, "\(list)")
        #expect(!list.stdout.contains("\"cpuSeconds\""), "no figure of the refused file is passed on: \(list.stdout)")
    }

    /// The ends of each range are read and passed on.
    @Test func figuresAtTheEndsOfTheirRangesAreShown() throws {
        let env = try TestEnvironment("hostilefigures")
        let session = try HostileSession(env)
        try plantRunningTask(env)
        try plantReport(env, #""cpuSeconds":1000000000000,"cpuPercent":100000,"memoryBytes":1125899906842624,"peakMemoryBytes":1125899906842624"#)
        let batch = try session.bgtopBatch()
        #expect(batch.status == 0, "\(batch)")
        #expect(!batch.stdout.contains("resources.json"), "\(batch.stdout)")
        let list = try session.bgctl("list", "--json")
        #expect(list.status == 0, "\(list)")
        let object = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
        let task = try #require((object?["tasks"] as? [[String: Any]])?.first, "\(list.stdout.prefix(2000))")
        #expect(task["cpuSeconds"] as? Double == 1e12, "\(task)")
        #expect(task["memoryBytes"] as? Int64 == 1 << 50, "\(task)")
    }
}
