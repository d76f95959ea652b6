import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The two ways a task reaches an app: the scheduler launches a new process, or it hands the task
/// to the app's process that is already running.
@Suite struct WakeUpPathTests {
    @Test func launchPathStartsTheAppWhichRunsItsTaskAndExits() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let submitted = try env.runFixture(["submit", TestEnvironment.refreshID, "appRefresh", "3600"])
        #expect(submitted.status == 0, "\(submitted)")
        #expect(submitted.stdout.contains("pending: \(TestEnvironment.refreshID)"))

        #expect(try env.bgctl("simulate-launch", TestEnvironment.refreshID).status == 0)
        try env.waitUntil("the launched app to run its task and exit") { !env.fixtureEvents("exiting").isEmpty }
        let started = env.fixtureEvents("started")
        #expect(started.count == 1)
        #expect(env.fixtureEvents("returned").count == 1)
        #expect(env.fixtureEvents("exiting").first?.pid == started.first?.pid)

        try env.waitUntil("the completion") { !env.events(.completed).isEmpty }
        let completed = env.events(.completed)
        #expect(completed.map(\.reason) == ["success"], "returning from the async handler completes the task")
        #expect(env.events(.exited).isEmpty, "the app completed before it exited")
        #expect(env.events(.attached).first?.pid == started.first?.pid)
        try env.waitUntil("the detachment") { env.events(.detached).count == 1 }
        #expect(try env.tasks().isEmpty)
    }

    @Test func resumePathHandsDueTasksToTheRunningProcess() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "serve")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // Started by a person, not by the scheduler: it attaches and waits for tasks.
        var environment = env.appEnvironment
        environment["BGTASK_APP_ID"] = TestEnvironment.fixtureID
        let app = try Spawn.start(TestEnvironment.binaries + "/TaskAppFixture",
                                  ["serve", "--record=\(env.fixtureRecord)", "--ids=\(TestEnvironment.refreshID)"],
                                  environment: environment, stdout: env.root + "/serve.out", stderr: env.root + "/serve.err")
        defer {
            kill(app, SIGKILL)
            _ = Spawn.wait(app)
        }
        try env.waitUntil("the app to attach") { env.events(.attached).contains { $0.pid == app } }

        for round in 1...2 {
            #expect(try env.bgctl("submit", "--app", TestEnvironment.fixtureID, "--id", TestEnvironment.refreshID,
                                  "--kind", "refresh").status == 0)
            try env.waitUntil("round \(round) to run in the running app") { env.fixtureEvents("started").count == round }
            try env.waitUntil("round \(round) to complete") { env.events(.completed).count == round }
        }
        #expect(env.fixtureEvents("started").allSatisfy { $0.pid == app }, "no second process was started")
        let launched = env.events(.launched)
        #expect(launched.count == 2)
        #expect(launched.allSatisfy { $0.pid == app && $0.message.contains("handed to running pid \(app)") })

        // Once that process is gone, the next due request starts a new one.
        kill(app, SIGKILL)
        _ = Spawn.wait(app)
        try env.waitUntil("the scheduler to see it go") { env.events(.detached).contains { $0.pid == app } }
        #expect(try env.bgctl("submit", "--app", TestEnvironment.fixtureID, "--id", TestEnvironment.refreshID,
                              "--kind", "refresh").status == 0)
        try env.waitUntil("a new process to take the task") { env.fixtureEvents("started").count == 3 }
        let third = try #require(env.fixtureEvents("started").last)
        // The scheduler started it and a serving app never exits by itself: the test ends it.
        defer {
            kill(third.pid, SIGKILL)
            try? env.waitUntil("the scheduler's serving app to end") { !processIsAlive(third.pid) }
        }
        #expect(third.pid != app)
        // The event is appended in the commit that launched it, which the app may outrun.
        try env.waitUntil("the launch's event") { env.events(.launched).contains { $0.message.contains("launched pid \(third.pid)") } }
    }
}

/// Background sessions: the app hands a transfer over and goes away; when it ends the scheduler
/// launches the app with the reason `urlSession`, and the app hears how it ended.
@Suite struct BackgroundSessionTests {
    private func run(_ env: TestEnvironment, _ arguments: [String]) throws -> TestEnvironment.Result {
        try env.runFixture(["session"] + arguments)
    }

    @Test func aFinishedDownloadLaunchesTheAppWhichHearsOfIt() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "session")
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let first = try run(env, ["download", server.url("/generated/300000?seed=4")])
        #expect(first.status == 0, "\(first)")
        let handedOver = try #require(env.fixtureEvents("handed-over").first)
        // The launch's event is appended in the commit that launched it, which the app may outrun.
        try await env.eventually("the app to be launched for its session", timeout: 15) {
            !env.fixtureEvents("events-finished").isEmpty && env.events(.launched).contains { $0.reason == "urlSession" }
        }
        let handler = try #require(env.fixtureEvents("session-handler").first)
        #expect(handler.detail == "urlSession")
        #expect(handler.pid != handedOver.pid, "a new process heard of it")
        let downloaded = try #require(env.fixtureEvents("downloaded").first)
        #expect(downloaded.identifier == handedOver.identifier)
        #expect(downloaded.detail.hasSuffix("/downloads/\(TestEnvironment.fixtureID)/\(handedOver.identifier) 300000"))
        #expect(env.fixtureEvents("session-complete").first?.detail == "ok")
        let launched = try #require(env.events(.launched).first { $0.reason == "urlSession" })
        #expect(launched.identifier?.rawValue == "com.example.testapp.session")
        try await env.eventually("the transfer to be acknowledged and the task completed") {
            (try env.list()["transfers"] as? [Any])?.isEmpty == true && env.events(.completed).contains { $0.kind == .urlSession }
        }
        #expect(env.events(.launched).filter { $0.reason == "urlSession" }.count == 1, "one launch per finished transfer")
        await server.shutdown()
    }

    /// The issue's whole promise in one run: the app hands a download over and exits, the
    /// connection drops, the scheduler is killed and restarted, and the bytes still arrive exact
    /// and the app hears of it.
    @Test func aDownloadSurvivesTheAppExitingADropAndASchedulerCrash() async throws {
        let env = try TestEnvironment()
        try env.writeSettings(["transferRetryInitialSeconds": 0.2])
        try env.addFixture(mode: "session")
        let size: Int64 = 9_000_000
        let server = try await LoopbackServer.start(routes: [
            // The resumed attempt stalls after 1 MB for 600 s, within the session's 900 s request
            // timeout, so the crash always lands mid-transfer however late the test gets to look.
            "/episode": Route(.generated(size: size, seed: 77), faults: Faults(bytesPerSecond: 3_000_000),
                              nextRequests: [Faults(bytesPerSecond: 3_000_000, dropAfter: 2_000_000),
                                             Faults(bytesPerSecond: 3_000_000, stallSeconds: 600, stallAfter: 1_000_000)]),
        ])
        let daemon = try env.startDaemon()
        #expect(try run(env, ["download", server.url("/episode"), "--request-timeout=900"]).status == 0)
        let handedOver = try #require(env.fixtureEvents("handed-over").first)
        #expect(!processIsAlive(handedOver.pid), "the app is gone")

        try await env.eventually("the drop and the resume", timeout: 15) { server.requests(for: "/episode").count >= 2 }
        let partial = env.paths.transferPartialData(TaskKey(app: try Identifier(validating: TestEnvironment.fixtureID),
                                                            identifier: try Identifier(validating: handedOver.identifier)))
        do {
            try await env.eventually("more bytes after the resume", timeout: 20) { (StateFiles.size(of: partial) ?? 0) > 2_500_000 }
        } catch {
            // What the server and the scheduler saw, so that a failure here can be read.
            let events = env.events().map { "\(JSONFormat.string(from: $0.time)) \($0.type) \($0.message)" }
            Issue.record("partial \(String(describing: StateFiles.size(of: partial))) bytes; requests \(server.requests(for: "/episode")); events:\n\(events.joined(separator: "\n"))")
            throw error
        }
        // Still the resumed attempt, in its stall: the crash lands mid-transfer.
        #expect(server.requests(for: "/episode").count == 2, "\(server.requests(for: "/episode"))")
        daemon.crash()
        let restarted = try env.startDaemon()
        defer { restarted.stop() }

        try await env.eventually("the app to hear the download is done", timeout: 20) { !env.fixtureEvents("events-finished").isEmpty }
        let downloaded = try #require(env.fixtureEvents("downloaded").first)
        let path = String(downloaded.detail.split(separator: " ").first ?? "")
        let data = try #require(FileManager.default.contents(atPath: path))
        #expect(data == Data(GeneratedBytes(size: size, seed: 77).bytes(0..<size)), "byte-exact")
        #expect(env.fixtureEvents("session-handler").first?.detail == "urlSession")
        let ranges = server.requests(for: "/episode").compactMap(\.range)
        #expect(ranges.count >= 2, "resumed twice with Range: \(ranges)")
        await server.shutdown()
    }

    @Test func anUploadThatFailsIsReportedWithTheSchedulersWords() async throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "session")
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let photo = env.root + "/photo.bin"
        try Data(repeating: 7, count: 50_000).write(to: URL(fileURLWithPath: photo))
        #expect(try run(env, ["upload", server.url("/upload/photo.bin?status=403"), photo]).status == 0)
        try await env.eventually("the app to hear of the failure", timeout: 15) { !env.fixtureEvents("session-complete").isEmpty }
        #expect(env.fixtureEvents("session-complete").first?.detail.contains("403") == true, "\(env.fixtureEvents())")
        await server.shutdown()
    }
}
