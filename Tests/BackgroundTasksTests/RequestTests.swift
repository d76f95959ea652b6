import Foundation
import TaskState
import TestSupport
import Testing

/// Submitting, cancelling and registering through the library: each refusal is the documented
/// Swift error with the scheduler's message, and misuse never hangs.
@Suite struct RequestTests {
    private let other = "com.example.testapp.other"

    @Test func eachRefusalIsTheDocumentedError() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return", identifiers: [TestEnvironment.refreshID, other], modes: ["fetch"])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let foreign = try env.runFixture(["submit", "com.example.testapp.elsewhere"])
        #expect(foreign.status == 3)
        #expect(foreign.stdout == "error notPermitted: com.example.testapp.elsewhere is not in com.example.testapp's permittedIdentifiers\n")

        let noMode = try env.runFixture(["submit", TestEnvironment.refreshID, "processing"])
        #expect(noMode.stdout == "error notPermitted: com.example.testapp's manifest does not declare the 'processing' background mode needed for processing\n")

        #expect(try env.runFixture(["submit", TestEnvironment.refreshID, "appRefresh", "3600"]).status == 0)
        let tooMany = try env.runFixture(["submit", other, "appRefresh", "3600"])
        #expect(tooMany.status == 3)
        #expect(tooMany.stdout == "error tooManyPendingTaskRequests: com.example.testapp already has 1 pending appRefresh request (limit 1) [caught by code]\n")

        #expect(try env.bgctl("app", "disable", TestEnvironment.fixtureID).status == 0)
        let disabled = try env.runFixture(["submit", TestEnvironment.refreshID, "appRefresh", "3600"])
        #expect(disabled.stdout == "error unavailable: background work is switched off for com.example.testapp\n")
        #expect(try env.bgctl("app", "enable", TestEnvironment.fixtureID).status == 0)

        // The same identifier again replaces the pending request instead of counting twice.
        let replaced = try env.runFixture(["submit", TestEnvironment.refreshID, "appRefresh", "7200"])
        #expect(replaced.stdout == "submitted \(TestEnvironment.refreshID)\npending: \(TestEnvironment.refreshID)\n")
        #expect(env.events(.replaced).count == 1)

        let cancelled = try env.runFixture(["cancel", TestEnvironment.refreshID])
        #expect(cancelled.stdout == "pending: \n")
    }

    @Test func submitWithoutASchedulerFailsAtOnce() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return")
        let down = try env.runFixture(["submit", TestEnvironment.refreshID])
        // "not running", not "did not answer": the app was not held up waiting for an outcome.
        #expect(down.status == 3)
        #expect(down.stdout == "error unavailable: bgtaskd is not running on \(env.state)\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: env.state).isEmpty, "nothing was queued")

        let missing = try env.runFixture(["submit", TestEnvironment.refreshID],
                                         environment: ["BGTASK_STATE_DIR": env.root + "/no-such-state"])
        #expect(missing.stdout == "error unavailable: the state directory \(env.root)/no-such-state does not exist; start bgtaskd\n")

        let noManifest = try env.runFixture(["submit", TestEnvironment.refreshID], app: "com.example.unknown")
        #expect(noManifest.stdout == "error unavailable: app com.example.unknown has no usable manifest in \(env.config)/apps\n")
    }

    @Test func registeringTwiceStopsTheAppWithAClearMessage() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return")
        let result = try env.runFixture(["register-twice"])
        #expect(result.status != 0)
        #expect(!result.stdout.contains("without stopping"))
        #expect(result.stderr.contains("Launch handler for task with identifier \(TestEnvironment.refreshID) has already been registered"))
    }

    @Test func registerRefusesUnpermittedIdentifiersAndLateRegistration() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return", identifiers: [TestEnvironment.refreshID, other])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let unpermitted = try env.runFixture(["register", "--ids=com.example.testapp.elsewhere"])
        #expect(unpermitted.stdout.hasPrefix("first: false\n"), "\(unpermitted)")
        #expect(unpermitted.stderr.contains("cannot register com.example.testapp.elsewhere: com.example.testapp.elsewhere is not in com.example.testapp's permittedIdentifiers"))

        let late = try env.runFixture(["register", "--ids=\(TestEnvironment.refreshID),\(other)"])
        #expect(late.stdout == "first: true\nlate: false\n", "\(late)")
        #expect(late.stderr.contains("launching has finished; register every launch handler before finishLaunching()"))
    }

    @Test func aHandlerCanSubmitTheNextRequest() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "resubmit")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", TestEnvironment.fixtureID, "--id", TestEnvironment.refreshID,
                              "--kind", "refresh").status == 0)
        try env.waitUntil("the app to run and exit") { !env.fixtureEvents("exiting").isEmpty }
        #expect(env.fixtureEvents("resubmitted").count == 1, "\(env.fixtureEvents())")
        let pending = try env.requests()
        #expect(pending.count == 1)
        #expect(pending.first?["identifier"] as? String == TestEnvironment.refreshID)
        let earliestText = try #require(pending.first?["earliestBeginDate"] as? String)
        let earliest = try #require(JSONFormat.date(from: earliestText))
        #expect(abs(earliest.timeIntervalSinceNow - 3600) < 60)
        #expect(env.events(.completed).map(\.reason) == ["success"])
    }
}
