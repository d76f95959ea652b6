import Foundation
import TaskState
import TestSupport
import Testing

/// Expiration reaches the app at once, whatever its handler is doing, and an app that ignores it
/// is killed and throttled.
@Suite struct ExpirationTests {
    /// Seconds between the scheduler's expiry (its `expired` event) and the app hearing of it.
    private func delay(of heard: FixtureEvent, in env: TestEnvironment) throws -> Double {
        // The commit that holds the event is durable before the signal, but the event log file
        // is written out after it: a loaded machine can let the app hear first.
        try env.waitUntil("the expired event in the log") { !env.events(.expired).isEmpty }
        let expired = try #require(env.events(.expired).first)
        return heard.time - expired.time.timeIntervalSince1970
    }

    @Test func expirationReachesAHandlerThatKeepsItsThreadBusy() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "spin")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.launchFixtureTask()

        #expect(try env.bgctl("simulate-expiration", TestEnvironment.refreshID).status == 0)
        try env.waitUntil("the expiration handler") { !env.fixtureEvents("expired").isEmpty }
        let heard = try delay(of: env.fixtureEvents("expired")[0], in: env)
        // After the expiry, never before it (how soon is bgbench's to measure).
        #expect(heard >= -0.002, "expiration handler ran \(Int(heard * 1000)) ms after the expiry")
        try env.waitUntil("the task to complete") { !env.events(.completed).isEmpty }
        #expect(env.events(.completed).first?.reason == "failure")
        #expect(env.events(.killed).isEmpty)
    }

    @Test func realExpiryCancelsTheAsyncHandlersTask() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["appRefreshBudgetSeconds": 1])
        try env.addFixture(mode: "async-spin")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", TestEnvironment.fixtureID, "--id", TestEnvironment.refreshID,
                              "--kind", "refresh").status == 0)
        try env.waitUntil("the handler to start") { !env.fixtureEvents("started").isEmpty }
        try env.waitUntil("the budget to run out and the task to be cancelled") { !env.fixtureEvents("cancelled").isEmpty }
        let heard = try delay(of: env.fixtureEvents("cancelled")[0], in: env)
        // After the expiry, never before it (how soon is bgbench's to measure).
        #expect(heard >= -0.002, "cancellation ran \(Int(heard * 1000)) ms after the expiry")
        try env.waitUntil("the app to exit") { !env.fixtureEvents("exiting").isEmpty }
        #expect(!env.fixtureEvents("saw-cancel").isEmpty, "Task.isCancelled turned true inside the handler")
        let completed = try #require(env.events(.completed).first)
        #expect(completed.reason == "failure", "a cancelled async handler completes with success: false")
        #expect(completed.message.contains("after its expiration"))
        #expect(env.events(.killed).isEmpty)
    }

    @Test func cancellationInterruptsTaskSleep() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "async-sleep")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.launchFixtureTask()
        #expect(try env.bgctl("simulate-expiration", TestEnvironment.refreshID).status == 0)
        try env.waitUntil("the sleep to be cancelled") { !env.fixtureEvents("cancelled").isEmpty }
        #expect(env.fixtureEvents("cancelled")[0].detail == "CancellationError")
        try env.waitUntil("the app to exit") { !env.fixtureEvents("exiting").isEmpty }
        #expect(env.events(.completed).first?.reason == "failure")
    }

    @Test func aHandlerThatNeverCompletesIsKilledAndItsAppThrottled() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["expirationGraceSeconds": 0.5, "throttleInitialSeconds": 120])
        try env.addFixture(mode: "never")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.launchFixtureTask()
        let pid = env.fixtureEvents("started")[0].pid
        #expect(try env.bgctl("simulate-expiration", TestEnvironment.refreshID).status == 0)
        try env.waitUntil("the kill") { !env.events(.killed).isEmpty }
        #expect(!env.fixtureEvents("expired").isEmpty, "the expiration handler ran before the kill")
        try env.waitUntil("the process to be gone") { !processIsAlive(pid) }
        let throttled = try #require(env.events(.throttled).first)
        #expect(throttled.app?.rawValue == TestEnvironment.fixtureID)
        let report = try env.bgctl("apps", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(report.stdout.utf8)) as? [String: Any]
        let apps = try #require(object?["apps"] as? [[String: Any]])
        #expect(apps.first { $0["id"] as? String == TestEnvironment.fixtureID }?["throttleLevel"] as? Int == 1)
    }

    @Test func aFinishingTaskHearsItsExpirationAndEndsItself() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["finishingBudgetSeconds": 1])
        try env.addFixture(mode: "finishing")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let result = try env.runFixture(["finishing"])
        #expect(result.status == 0, "\(result)")
        let began = try #require(env.fixtureEvents("began").first)
        #expect(began.detail == "1")
        let heard = try delay(of: try #require(env.fixtureEvents("expired").first), in: env)
        // After the expiry, never before it (how soon is bgbench's to measure).
        #expect(heard >= -0.002, "expiration handler ran \(Int(heard * 1000)) ms after the expiry")
        try env.waitUntil("the completion") { !env.events(.completed).isEmpty }
        let completed = try #require(env.events(.completed).first)
        #expect(completed.identifier?.rawValue == "finishing-1")
        #expect(completed.kind == .finishing)
        #expect(env.events(.killed).isEmpty)
    }
}
