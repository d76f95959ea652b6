import Foundation
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
        #expect(third.pid != app)
        #expect(env.events(.launched).last?.message.contains("launched pid \(third.pid)") == true)
    }
}
