import Foundation
import TaskState
import TestSupport
import Testing

/// The 2019 talk's small rules, through the real scheduler: processing is for apps a person uses,
/// a begin date more than a week ahead is discouraged, and code that is not an app has
/// `performExpiringActivity`.
@Suite struct SmallRulesTests {
    private let week = 7 * 86_400

    /// The lines of `text` that carry the distant-date warning.
    private func warnings(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { $0.contains("more than a week ahead is discouraged") }
    }

    @Test func aBeginDateMoreThanAWeekAheadIsAcceptedWithOneWarningLine() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return", identifiers: [TestEnvironment.refreshID, "com.example.testapp.sync"])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let far = try env.bgctl("submit", "--app", TestEnvironment.fixtureID, "--id", TestEnvironment.refreshID,
                                "--kind", "refresh", "--earliest", "+\(week + 3600)")
        #expect(far.status == 0, "\(far)")
        #expect(far.stderr.split(separator: "\n").count == 1, "\(far)")
        #expect(far.stderr.hasPrefix("bgctl: warning: earliestBeginDate of \(TestEnvironment.refreshID) is 7 days ahead ("), "\(far)")
        #expect(warnings(far.stderr).count == 1)
        let near = try env.bgctl("submit", "--app", TestEnvironment.fixtureID, "--id", "com.example.testapp.sync",
                                 "--kind", "processing", "--earliest", "+\(week - 60)")
        #expect(near.status == 0 && near.stderr.isEmpty, "\(near)")

        // The library accepts it too, and logs the same advice once.
        let library = try env.runFixture(["submit", TestEnvironment.refreshID, "appRefresh", "\(3 * week + 3600)"])
        #expect(library.status == 0, "\(library)")
        #expect(library.stdout.hasPrefix("submitted \(TestEnvironment.refreshID)\n"), "\(library)")
        let logged = warnings(library.stderr)
        #expect(logged.count == 1, "\(library)")
        #expect(logged.first?.contains("is 21 days ahead") == true, "\(library)")
        #expect(warnings(try env.runFixture(["submit", TestEnvironment.refreshID, "appRefresh", "3600"]).stderr).isEmpty)
    }

    /// `bgctl list --json`'s blockers of the fixture's request `identifier`.
    private func blockers(_ env: TestEnvironment, _ identifier: String) throws -> [String] {
        let listing = try env.bgctl("list", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [String: Any]
        let requests = try #require(object?["requests"] as? [[String: Any]], "\(listing)")
        let request = try #require(requests.first { $0["identifier"] as? String == identifier }, "\(listing)")
        return try #require(request["blockers"] as? [String])
    }

    @Test func processingWaitsForAPersonsUseAndAForegroundSubmitIsOne() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["processingRecentUseDays": 7])
        try env.addFixture(mode: "return", identifiers: ["com.example.testapp.sync", "com.example.testapp.index"])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // A person's bgctl is not a use of the app: the request waits, and says why.
        #expect(try env.bgctl("submit", "--app", TestEnvironment.fixtureID, "--id", "com.example.testapp.sync",
                              "--kind", "processing", "--earliest", "+3600").status == 0)
        #expect(try blockers(env, "com.example.testapp.sync").contains("notRecentlyUsed"))
        let text = try env.bgctl("list")
        #expect(text.stdout.contains("notRecentlyUsed"), "\(text)")

        // The app, started by a person, asks for processing: that is a use, recorded first.
        let submitted = try env.runFixture(["submit", "com.example.testapp.index", "processing", "3600"])
        #expect(submitted.status == 0, "\(submitted)")
        try env.waitUntil("the use in the event log") { env.events(.appUsed).count == 1 }
        #expect(try !blockers(env, "com.example.testapp.index").contains("notRecentlyUsed"))
        #expect(try !blockers(env, "com.example.testapp.sync").contains("notRecentlyUsed"), "the use counts for the whole app")
    }

    @Test func anExpiringActivityRunsThenHearsItsExpiryOnAnotherThread() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["finishingBudgetSeconds": 1])
        try env.addFixture(mode: "return")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let result = try env.runFixture(["expiring-activity"])
        #expect(result.status == 0, "\(result)")
        let calls = env.fixtureEvents("activity").map(\.detail)
        #expect(calls.count == 2, "\(calls)")
        let first = try #require(calls.first), second = try #require(calls.last)
        #expect(first.hasPrefix("expired=false thread="))
        #expect(second.hasPrefix("expired=true thread="))
        let threads = calls.map { $0.split(separator: "=").last.map(String.init) ?? "" }
        #expect(threads[0] != threads[1], "the expired call runs on another thread: \(calls)")
        #expect(!env.fixtureEvents("activity-returned").isEmpty)
        #expect(!env.fixtureEvents("activity-ended").isEmpty, "the finishing task ended once the first call returned")
        // The app saw its task file go, and a commit writes its files before it appends its events
        // (the expiry's among them, when it came in the same commit): wait for the completion first.
        try env.waitUntil("the completion") { !env.events(.completed).isEmpty }
        // A finishing task underneath, named by the reason, expired by its budget and then ended.
        let expired = try #require(env.events(.expired).first)
        #expect(expired.kind == .finishing)
        #expect(env.events(.completed).first?.kind == .finishing)
        #expect(env.events(.killed).isEmpty)
    }

    @Test func withoutASchedulerTheActivityIsExpiredAtOnce() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return")
        let result = try env.runFixture(["expiring-activity", "--no-time"])
        #expect(result.status == 0, "\(result)")
        #expect(env.fixtureEvents("activity").map { $0.detail.hasPrefix("expired=true") } == [true])
        #expect(!result.stderr.isEmpty, "why no time was granted is logged: \(result)")
    }
}
