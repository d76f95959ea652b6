import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// `willBeginDelayedRequest` through the real scheduler: a delayed download whose delegate asks
/// is not begun until the app answers, whether a running process of it is asked or the stopped
/// app is launched to be asked; each of the three answers and the timeout.
@Suite struct DelayedRequestSessionTests {
    private static let size: Int64 = 20_000

    /// The fixture in `ask` mode answering `answer`; the session's launches come back to it.
    private func addAsker(_ env: TestEnvironment, answer: String) throws {
        try env.addLibraryApp(TestEnvironment.fixtureID, product: "TaskAppFixture",
                              arguments: ["ask", "--answer=\(answer)", "--record=\(env.fixtureRecord)",
                                          "--ids=\(TestEnvironment.refreshID)"],
                              identifiers: [TestEnvironment.refreshID])
    }

    private func endFixtureProcesses(_ env: TestEnvironment) {
        for pid in Set(env.fixtureEvents().map(\.pid)) where processIsAlive(pid) { kill(pid, SIGKILL) }
    }

    /// Starts the fixture by hand with `--stay`: it hands over a download of `old` and stays attached.
    private func startAttached(_ env: TestEnvironment, old: String, answer: String) throws -> pid_t {
        var environment = env.appEnvironment
        environment["BGTASK_APP_ID"] = TestEnvironment.fixtureID
        return try Spawn.start(TestEnvironment.binaries + "/TaskAppFixture",
                               ["ask", "download", old, "--answer=\(answer)", "--stay", "--record=\(env.fixtureRecord)"],
                               environment: environment, stdout: env.root + "/ask.out", stderr: env.root + "/ask.err")
    }

    @Test(arguments: ["continue", "new", "cancel", "never"])
    func aRunningProcessIsAskedAndItsAnswerIsApplied(answer: String) async throws {
        let env = try TestEnvironment()
        try env.writeSettings(["delayedRequestAnswerSeconds": 3])
        let server = try await LoopbackServer.start()
        let old = server.url("/generated/\(Self.size)?seed=1"), fresh = server.url("/generated/\(Self.size)?seed=2")
        let said = answer == "new" ? "new:\(fresh)" : answer
        try addAsker(env, answer: said)
        let daemon = try env.startDaemon()
        let app = try startAttached(env, old: old, answer: said)
        defer {
            kill(app, SIGKILL)
            _ = Spawn.wait(app)
            endFixtureProcesses(env)
            daemon.stop()
        }
        // The app is asked from the transfer's file, which its commit writes before it appends the event.
        try await env.eventually("the running process to be asked", timeout: 20) {
            !env.fixtureEvents("asked").isEmpty && !env.events(.transferAsked).isEmpty
        }
        let asked = try #require(env.fixtureEvents("asked").first)
        #expect(asked.pid == app)
        #expect(asked.detail == "\(old) Bearer old-t0ken", "the delegate gets the request as made, secrets included")
        #expect(env.events(.transferAsked).first?.message.contains("asked its running process") == true)
        // A cancel ends the transfer in the commit of the answer, whose file the delegate hears of
        // before that commit appends its events: wait for the answer's event too.
        try await env.eventually("the transfer to end", timeout: 30) {
            !env.fixtureEvents("session-complete").isEmpty && (answer == "never" || !env.events(.transferAnswered).isEmpty)
        }
        let end = try #require(env.fixtureEvents("session-complete").first?.detail)
        let seenOld = server.requests(for: "/generated/\(Self.size)").filter { $0.target.hasSuffix("seed=1") }
        let seenNew = server.requests(for: "/generated/\(Self.size)").filter { $0.target.hasSuffix("seed=2") }
        switch answer {
        case "continue", "never":
            #expect(end == "ok")
            #expect(seenOld.count == 1 && seenNew.isEmpty)
            #expect(seenOld.first?.values("Authorization") == ["Bearer old-t0ken"])
        case "new":
            #expect(end == "ok")
            #expect(seenOld.isEmpty && seenNew.count == 1, "no byte of the stale request went out")
            #expect(seenNew.first?.values("Authorization") == ["Bearer new-t0ken"])
        default:
            #expect(end.contains("cancelled by the app before its delayed begin"), "\(end)")
            #expect(seenOld.isEmpty && seenNew.isEmpty)
        }
        if answer == "never" {
            #expect(env.events(.transferAnswerTimedOut).count == 1)
            #expect(env.events(.transferAnswered).isEmpty)
        } else {
            let reason = answer == "continue" ? "continue" : answer
            #expect(env.events(.transferAnswered).map(\.reason) == [reason])
        }
        #expect(env.events(.launched).isEmpty, "a running process is asked without a launch")
        let log = String(decoding: FileManager.default.contents(atPath: env.paths.events) ?? Data(), as: UTF8.self)
        #expect(!log.contains("t0ken"), "no secret in the event log")
        await server.shutdown()
    }

    /// A new request the scheduler could not use (not http or https) cancels the transfer: the
    /// request the delegate turned down does not go out when the answer time ends.
    @Test func anUnusableNewRequestCancelsRatherThanSendingTheOldOne() async throws {
        let env = try TestEnvironment()
        try env.writeSettings(["delayedRequestAnswerSeconds": 3])
        let server = try await LoopbackServer.start()
        let old = server.url("/generated/\(Self.size)?seed=5")
        try addAsker(env, answer: "new:ftp://127.0.0.1/elsewhere")
        let daemon = try env.startDaemon()
        let app = try startAttached(env, old: old, answer: "new:ftp://127.0.0.1/elsewhere")
        defer {
            kill(app, SIGKILL)
            _ = Spawn.wait(app)
            endFixtureProcesses(env)
            daemon.stop()
        }
        // A commit writes its files before it appends its events: wait for the answer's event too.
        try await env.eventually("the transfer to end", timeout: 30) {
            !env.fixtureEvents("session-complete").isEmpty && !env.events(.transferAnswered).isEmpty
        }
        let end = try #require(env.fixtureEvents("session-complete").first?.detail)
        #expect(end.contains("cancelled by the app before its delayed begin"), "\(end)")
        #expect(server.requests(for: "/generated/\(Self.size)").isEmpty, "the old request never went out")
        #expect(env.events(.transferAnswered).map(\.reason) == ["cancel"])
        #expect(env.events(.transferAnswerTimedOut).isEmpty)
        await server.shutdown()
    }

    @Test func aStoppedAppIsLaunchedToBeAskedAndItsNewRequestGoesOut() async throws {
        let env = try TestEnvironment()
        let server = try await LoopbackServer.start()
        let old = server.url("/generated/\(Self.size)?seed=3"), fresh = server.url("/generated/\(Self.size)?seed=4")
        try addAsker(env, answer: "new:\(fresh)")
        let daemon = try env.startDaemon()
        defer {
            endFixtureProcesses(env)
            daemon.stop()
        }
        // Started by a person, it hands over the download and exits before its date.
        let handed = try env.runFixture(["ask", "download", old, "--answer=new:\(fresh)"])
        #expect(handed.status == 0, "\(handed)")
        try await env.eventually("the launched app to be asked", timeout: 20) { !env.fixtureEvents("asked").isEmpty }
        let asked = try #require(env.fixtureEvents("asked").first)
        #expect(asked.launchReason == "urlSession")
        #expect(asked.pid != env.fixtureEvents("handed-over").first?.pid)
        try await env.eventually("the changed download to complete and be heard of", timeout: 30) {
            env.fixtureEvents("downloaded").first?.detail == "\(Self.size)"
        }
        let seen = server.requests(for: "/generated/\(Self.size)")
        #expect(seen.map { $0.target.hasSuffix("seed=4") } == [true], "only the new request went out")
        #expect(seen.first?.values("Authorization") == ["Bearer new-t0ken"])
        #expect(env.events(.transferAnswered).first?.reason == "new")
        try await env.eventually("every launched process to exit", timeout: 20) {
            env.fixtureEvents().allSatisfy { !processIsAlive($0.pid) }
        }
        await server.shutdown()
    }
}
