import Foundation
import TestSupport
import Testing
import TaskState

/// A launch records where its output starts in `logs/<app>.log`: the task record's and the
/// `launched` event's `logOffset` point at the marker line the scheduler wrote just before the
/// process started, and the process's own output follows it.
@Suite struct LaunchLogOffsetTests {
    @Test func theTaskRecordsLogOffsetPointsAtTheLaunchsMarkerLine() throws {
        let env = try TestEnvironment()
        let app = "com.example.logger"
        let identifier = "com.example.logger.refresh"
        try env.addApp(app, identifiers: [identifier], script: TestEnvironment.scriptCompletingOnExpiry(identifier, printing: "output of $BGTASK_LAUNCH_ID"))
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // Should an expectation stop the test early, the handler still ends before the scheduler.
        defer {
            _ = try? env.bgctl("simulate-expiration", identifier)
            try? env.waitUntil("the handler to finish") { try env.tasks().isEmpty }
        }

        var offsets: [Int64] = []
        for _ in 0..<2 {
            #expect(try env.bgctl("submit", "--app", app, "--id", identifier, "--kind", "refresh", "--earliest", "+3600").status == 0)
            #expect(try env.bgctl("simulate-launch", identifier).status == 0)
            let taskPath = "\(env.paths.tasks)/\(app)/\(identifier).json"
            let task = try JSONFormat.decode(LaunchedTask.self, from: try StateFiles.read(taskPath))
            let offset = try #require(task.logOffset)
            try env.waitUntil("the app's output") { logText(env, app).contains("output of \(task.launchID)\n") }

            let log = logText(env, app)
            let fromOffset = String(decoding: Array(log.utf8).dropFirst(Int(offset)), as: UTF8.self)
            let lines = fromOffset.split(separator: "\n", omittingEmptySubsequences: false)
            let marker = try #require(LogMarker(parsing: String(lines[0])), "not a marker line: \(lines[0])")
            #expect(marker.launchID == task.launchID)
            #expect(marker.kinds == ["appRefresh"] && marker.identifiers == [identifier])
            #expect(lines[0].hasPrefix("--- bgtaskd: launch \(task.launchID) appRefresh \(identifier) at "))
            #expect(lines[1] == "output of \(task.launchID)")
            // The event log is appended in the same commit, but may be read a moment after the task file.
            try env.waitUntil("the launch's event") { env.events(.launched).count == offsets.count + 1 }
            #expect(env.events(.launched).last?.logOffset == offset)
            offsets.append(offset)

            #expect(try env.bgctl("simulate-expiration", identifier).status == 0)
            try env.waitUntil("the task to complete") { try env.tasks().isEmpty }
        }
        // The second launch starts after the first one's output, where the log ended.
        #expect(offsets[0] == 0)
        #expect(offsets[1] > offsets[0])
        // The pager's reader finds each launch from the task's offset.
        let excerpt = LogReader.read(LogRequest(app: try Identifier(validating: app),
                                                position: .launch(launchID: nil, identifier: identifier, offset: offsets[0])),
                                     paths: env.paths)
        #expect(excerpt.match == offsets[0])
    }

    private func logText(_ env: TestEnvironment, _ app: String) -> String {
        (try? String(contentsOfFile: "\(env.paths.logs)/\(app).log", encoding: .utf8)) ?? ""
    }
}
