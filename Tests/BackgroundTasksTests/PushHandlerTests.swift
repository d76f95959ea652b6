import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The library's push handler (`BGApplication.registerForRemoteNotifications`) against the real
/// scheduler and real app processes: both wake-up paths, the answer, expiry.
@Suite struct PushHandlerTests {
    static let modes = ["fetch", "processing", "remote-notification"]

    /// The app's record as the scheduler wrote it (`apps/<app>.json`).
    private func appRecord(_ env: TestEnvironment) throws -> [String: Any] {
        let data = try #require(FileManager.default.contents(atPath: "\(env.state)/apps/\(TestEnvironment.fixtureID).json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func push(_ env: TestEnvironment, _ payload: String) throws -> TestEnvironment.Result {
        let sent = try env.bgctl("push", TestEnvironment.fixtureID, "--payload", payload)
        #expect(sent.status == 0, "\(sent)")
        return sent
    }

    @Test(arguments: ["newData", "noData", "failed"])
    func aPushLaunchesAStoppedAppWhoseHandlerGetsTheUserInfoAndAnswers(answer: String) throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return", modes: Self.modes, pushHandler: true)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // Keys sorted and no spaces: as the fixture writes back the userInfo it received.
        let payload = #"{"answer":"\#(answer)","aps":{"content-available":1},"storm":{"level":3,"region":"north"}}"#
        let sent = try push(env, payload)
        #expect(sent.stdout.contains("launched \(TestEnvironment.fixtureID) (pid"), "\(sent)")
        try env.waitUntil("the launched app to answer and exit") { !env.fixtureEvents("exiting").isEmpty }

        let received = try #require(env.fixtureEvents("push-received").first)
        #expect(received.launchReason == "remoteNotification")
        #expect(received.detail == payload, "userInfo is the payload's JSON object")
        #expect(env.fixtureEvents("push-returned").first?.detail == answer)
        #expect(env.fixtureEvents("exiting").first?.pid == received.pid)
        let delivered = try #require(env.events(.pushDelivered).first)
        #expect(delivered.pid == received.pid)
        #expect(delivered.message.contains("launched pid \(received.pid) for push"), "\(delivered.message)")
        #expect(env.events(.attached).first?.message.contains("pushes") == true, "it attached accepting pushes")

        try env.waitUntil("the answer to be applied") { !env.events(.completed).isEmpty }
        let completed = try #require(env.events(.completed).first)
        #expect(completed.kind == .remoteNotification)
        #expect(completed.identifier == delivered.identifier)
        #expect(completed.reason == answer)
        #expect(try appRecord(env)["lastPushResult"] as? String == answer)
        try env.waitUntil("the app to detach") { env.events(.detached).count == 1 }
        #expect(try env.tasks().isEmpty)
    }

    @Test func aPushToARunningAttachedAppIsHandedToThatProcess() throws {
        let env = try TestEnvironment()
        // Should the scheduler launch a process after all, that one exits by itself.
        try env.addFixture(mode: "return", modes: Self.modes)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        // Started by a person: it registers its push handler, attaches and waits.
        var environment = env.appEnvironment
        environment["BGTASK_APP_ID"] = TestEnvironment.fixtureID
        let app = try Spawn.start(TestEnvironment.binaries + "/TaskAppFixture",
                                  ["serve", "--push", "--record=\(env.fixtureRecord)", "--ids=\(TestEnvironment.refreshID)"],
                                  environment: environment, stdout: env.root + "/serve.out", stderr: env.root + "/serve.err")
        defer {
            kill(app, SIGKILL)
            _ = Spawn.wait(app)
        }
        try env.waitUntil("the app to attach") { env.events(.attached).contains { $0.pid == app } }
        #expect(env.events(.attached).first?.message.contains("pushes") == true)

        for (round, answer) in ["noData", "newData"].enumerated() {
            let sent = try push(env, #"{"answer":"\#(answer)","aps":{"content-available":1},"round":\#(round)}"#)
            #expect(sent.stdout.contains("handed to running \(TestEnvironment.fixtureID) (pid \(app))"), "\(sent)")
            try env.waitUntil("push \(round) to be answered") { env.events(.completed).count == round + 1 }
            #expect(env.events(.completed).last?.reason == answer)
            #expect(try appRecord(env)["lastPushResult"] as? String == answer)
        }
        let received = env.fixtureEvents("push-received")
        #expect(received.count == 2)
        #expect(received.allSatisfy { $0.pid == app && $0.launchReason == nil }, "no new process: \(received)")
        #expect(received.last?.detail == #"{"answer":"newData","aps":{"content-available":1},"round":1}"#)
        #expect(env.events(.pushDelivered).allSatisfy { $0.pid == app && $0.message.contains("handed to running pid \(app)") })
        #expect(env.events(.launched).isEmpty, "nothing was launched")
        #expect(processIsAlive(app))
    }

    @Test func anAsyncPushHandlerThatOutlivesItsBudgetIsCancelledAndAnswersFailed() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["appRefreshBudgetSeconds": 1])
        try env.addFixture(mode: "return", modes: Self.modes, pushHandler: true)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        _ = try push(env, #"{"aps":{"content-available":1},"behaviour":"sleep"}"#)
        try env.waitUntil("the handler to start") { !env.fixtureEvents("push-received").isEmpty }
        try env.waitUntil("the budget to run out and the handler to be cancelled") { !env.fixtureEvents("push-cancelled").isEmpty }
        try env.waitUntil("the app to exit") { !env.fixtureEvents("exiting").isEmpty }
        let expired = try #require(env.events(.expired).first)
        #expect(expired.kind == .remoteNotification)
        // The handler returned newData after it was cancelled: the answer is failed all the same.
        #expect(env.fixtureEvents("push-returned").first?.detail == "newData")
        try env.waitUntil("the answer to be applied") { !env.events(.completed).isEmpty }
        let completed = try #require(env.events(.completed).first)
        #expect(completed.identifier == expired.identifier)
        #expect(completed.reason == "failed")
        #expect(completed.message.contains("after its expiration"), "\(completed.message)")
        #expect(env.events(.killed).isEmpty, "cancellation ended it within the grace period")
        #expect(try appRecord(env)["lastPushResult"] as? String == "failed")
    }

    @Test func aPushWithNoHandlerRegisteredIsAnsweredFailed() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return", modes: Self.modes)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        _ = try push(env, #"{"aps":{"content-available":1}}"#)
        try env.waitUntil("the app to exit") { !env.fixtureEvents("exiting").isEmpty }
        try env.waitUntil("the answer to be applied") { !env.events(.completed).isEmpty }
        let completed = try #require(env.events(.completed).first)
        #expect(completed.kind == .remoteNotification)
        #expect(completed.reason == "failed")
        let id = try #require(completed.identifier?.rawValue)
        try env.waitUntil("the app's log") { env.appLog(TestEnvironment.fixtureID).contains("no push handler") }
        #expect(env.appLog(TestEnvironment.fixtureID).contains(
            "no push handler is registered for \(id) (BGApplication.shared.registerForRemoteNotifications); answering failed"))
        #expect(env.events(.attached).first?.message.contains("pushes") == false, "it did not offer to take pushes")
        #expect(env.fixtureEvents("push-received").isEmpty)
    }

    @Test func registrationNeedsTheModeAndComesBeforeLaunchingFinishes() throws {
        let env = try TestEnvironment()
        try env.addFixture(mode: "return", modes: ["fetch"])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let withoutMode = try env.runFixture(["push-register"])
        #expect(withoutMode.stdout == "push: false\nagain: false\nlate: false\n", "\(withoutMode)")
        #expect(withoutMode.stderr.contains(
            "cannot register for remote notifications: \(TestEnvironment.fixtureID)'s manifest does not declare the 'remote-notification' background mode"),
            "\(withoutMode)")

        try env.addFixture(mode: "return", modes: Self.modes)
        let withMode = try env.runFixture(["push-register"])
        #expect(withMode.stdout == "push: true\nagain: false\nlate: false\n", "\(withMode)")
        #expect(withMode.stderr.contains("a push handler is already registered; the first one stays"), "\(withMode)")
        #expect(withMode.stderr.contains("launching has finished; register the push handler before finishLaunching()"), "\(withMode)")
    }
}
