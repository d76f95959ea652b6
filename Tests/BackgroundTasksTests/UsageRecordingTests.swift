import Foundation
import TaskState
import TestSupport
import Testing

/// The library counts a process a person started as a use of the app, and one the scheduler
/// launched as none.
@Suite struct UsageRecordingTests {
    @Test func aProcessStartedByAPersonIsAUseAndALaunchedOneIsNot() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let byHand = try env.runFixture(["register"])
        #expect(byHand.status == 0, "\(byHand)")
        try env.waitUntil("the use to be recorded") { !env.events(.appUsed).isEmpty }
        let history = try JSONFormat.decode(UsageHistory.self, from: try StateFiles.read(env.paths.usage(of: try Identifier(validating: TestEnvironment.fixtureID))))
        #expect(history.uses.count == 1)

        // Launched by the scheduler: no use.
        try env.launchFixtureTask()
        try env.waitUntil("the launched task to end") { try !env.events(.completed).isEmpty && env.tasks().isEmpty }
        #expect(env.events(.appUsed).count == 1)
    }
}
