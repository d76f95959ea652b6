import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Push subscriptions against the real scheduler and a loopback ntfy server: messages become
/// pushes, a cut stream or a `kill -9` of the scheduler resumes with `since=` and loses or
/// doubles nothing, bad lines and a refused token are events and a visible state.
@Suite struct PushSubscriptionTests {
    static let app = "com.example.alerts"
    static let topic = "alerts"
    static let storm = #"{"aps":{"content-available":1},"storm":"north"}"#

    /// The alerts app of `PushTests` (records its launch and payload, answers `noData`),
    /// subscribed to `url`.
    static func addSubscribedApp(_ env: TestEnvironment, url: String, authorizationFile: String? = nil) throws {
        try PushTests.addAlertsApp(env)
        try writeManifest(env, push: [url], authorizationFile: authorizationFile)
    }

    static func writeManifest(_ env: TestEnvironment, push urls: [String], authorizationFile: String? = nil) throws {
        var subscriptions: [[String: Any]] = []
        for url in urls {
            var entry: [String: Any] = ["ntfy": url]
            if let authorizationFile { entry["authorizationFile"] = authorizationFile }
            subscriptions.append(entry)
        }
        let manifest: [String: Any] = [
            "id": app, "executable": "\(env.root)/\(app).sh", "permittedIdentifiers": ["com.example.alerts.refresh"],
            "backgroundModes": ["fetch", "remote-notification"], "push": subscriptions,
        ]
        try env.writeJSON(manifest, to: "\(env.config)/apps/\(app).json")
    }

    /// Runs `body` with a server that is stopped however `body` ends.
    static func withServer(_ body: (PushTopicServer) async throws -> Void) async throws {
        let server = try await PushTopicServer.start()
        do {
            try await body(server)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func status(_ env: TestEnvironment) -> SubscriptionStatus.Stream? {
        guard let data = try? StateFiles.read(env.paths.subscriptions(of: try! Identifier(validating: app))) else { return nil }
        return (try? JSONFormat.decode(SubscriptionStatus.self, from: data))?.streams.first
    }

    /// The state `bgctl apps --json` shows for the app's first subscription.
    static func shownState(_ env: TestEnvironment) throws -> String? {
        let apps = try env.bgctl("apps", "--json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])
        return ((report["apps"] as? [[String: Any]])?.first?["pushSubscriptions"] as? [[String: Any]])?.first?["state"] as? String
    }

    /// How many `pushReceived` events name message `id`.
    static func received(_ env: TestEnvironment, _ id: String) -> Int {
        env.events(.pushReceived).filter { $0.message.contains("(message \(id))") }.count
    }

    static func subscriptionEvents(_ env: TestEnvironment, containing text: String) -> [Event] {
        env.events(.pushSubscription).filter { $0.message.contains(text) }
    }

    @Test func publishedMessagesBecomePushesAndANonPushIsAnEvent() async throws {
        let env = try TestEnvironment()
        try env.writeSettings(["pushBudgetPerHour": 1])
        try await Self.withServer { server in
            let url = server.url(of: Self.topic)
            try Self.addSubscribedApp(env, url: url)
            let daemon = try env.startDaemon()
            defer { daemon.stop() }
            try await env.eventually("the stream to open") { Self.status(env)?.state == .connected }
            #expect(server.openStreams(of: Self.topic) == 1)
            #expect(server.subscribeRequests.first?.since == nil, "a new subscription asks only for new messages")

            // The first launches the stopped app.
            let first = server.publish(topic: Self.topic, message: Self.storm, priority: 4)
            try await env.eventually("the handler's answer") { !env.events(.completed).isEmpty }
            let received = try #require(env.events(.pushReceived).first)
            #expect(received.message.contains("from \(url) (message \(first))"), "\(received.message)")
            #expect(received.reason == "priority 10", "ntfy priority 4 is apns-priority 10")
            let lines = env.output(of: Self.app)
            #expect(lines.first?.hasPrefix("start remoteNotification remoteNotification push-") == true, "\(lines)")
            #expect(env.events(.pushDelivered).count == 1)
            #expect(Self.status(env)?.lastMessageID == first)

            // The second finds the budget spent and is held: its payload is the message's body.
            let body = #"{"aps":{"content-available":1},"n":2}"#
            let second = server.publish(topic: Self.topic, message: body, priority: 2)
            try await env.eventually("the second push to be held") { try !PushTests.pushes(env).isEmpty }
            let held = try #require(try PushTests.pushes(env).first)
            #expect(held["payload"] as? String == body)
            #expect(held["priority"] as? Int == 5, "ntfy priority 2 is apns-priority 5")
            #expect(held["source"] as? String == url)
            let heldID = try Identifier(validating: try #require(held["id"] as? String))
            let file = env.paths.push(TaskKey(app: try Identifier(validating: Self.app), identifier: heldID))
            #expect(try JSONFormat.decode(HeldPush.self, from: StateFiles.read(file)).messageID == second)

            let chatter = server.publish(topic: Self.topic, message: "hello, not a push")
            try await env.eventually("the non-push to be dropped") { !env.events(.pushDropped).isEmpty }
            let dropped = try #require(env.events(.pushDropped).first)
            #expect(dropped.reason == "notAPush")
            #expect(dropped.message.contains("message \(chatter) is not a push: push payload is not valid JSON"), "\(dropped.message)")
            try await env.eventually("the cursor to pass it") { Self.status(env)?.lastMessageID == chatter }
            #expect(env.events(.pushReceived).count == 2)

            // The manifest drops the subscription: its stream closes. Named again, it resumes
            // after its cursor: nothing published meanwhile is missed.
            try Self.writeManifest(env, push: [])
            try await env.eventually("the stream to close") { server.openStreams(of: Self.topic) == 0 }
            let meanwhile = server.publish(topic: Self.topic, message: Self.storm)
            try Self.writeManifest(env, push: [url])
            try await env.eventually("the message published meanwhile") { Self.received(env, meanwhile) == 1 }
            // The stream named again resumes after its cursor (a loaded machine may add a
            // reconnect without one before the first message).
            let sinces = server.subscribeRequests.map(\.since)
            #expect(sinces.first == .some(nil) && sinces.last == chatter && sinces.compactMap { $0 } == [chatter], "\(sinces)")
            try Self.writeManifest(env, push: [])
            try await env.eventually("the stream to close again") { server.openStreams(of: Self.topic) == 0 }
            try await env.eventually("the app to exit") { try env.tasks().isEmpty }
            #expect(daemon.stop() == 0)
        }
    }

    @Test func aCutStreamResumesWithSinceAndEveryMessageArrivesOnce() async throws {
        let env = try TestEnvironment()
        try await Self.withServer { server in
            try Self.addSubscribedApp(env, url: server.url(of: Self.topic))
            var faults = server.faults
            faults.closeAfterMessages = 2
            server.faults = faults
            let daemon = try env.startDaemon()
            defer { daemon.stop() }
            try await env.eventually("the stream to open") { Self.status(env)?.state == .connected }

            var ids = [server.publish(topic: Self.topic, message: Self.storm),
                       server.publish(topic: Self.topic, message: Self.storm)]
            // The cut is seen by the reconnect it causes (a second subscribe request): the moment
            // with no stream open lasts only the backoff, which a loaded machine may not sample.
            try await env.eventually("the server to cut the stream and the scheduler to reconnect") { server.subscribeRequests.count >= 2 }
            ids += [server.publish(topic: Self.topic, message: Self.storm),
                    server.publish(topic: Self.topic, message: Self.storm)]
            try await env.eventually("all four pushes", timeout: 20) { ids.allSatisfy { Self.received(env, $0) >= 1 } }
            // Before the first message a loaded machine may see the stream drop and come back
            // (since=nil again); the first reconnect with a cursor is the cut's, after the second.
            let sinces = server.subscribeRequests.map(\.since)
            #expect(sinces.first == .some(nil), "the first request has no cursor: \(sinces)")
            #expect(sinces.first { $0 != nil } == ids[1], "the reconnect resumes after the last message taken: \(sinces)")
            #expect(ids.map { Self.received(env, $0) } == [1, 1, 1, 1])
            #expect(env.events(.pushDropped).isEmpty, "no message was read twice")
            #expect(!Self.subscriptionEvents(env, containing: "ended: the server closed the stream").isEmpty)
            try await env.eventually("the cursor to reach the last message") { Self.status(env)?.lastMessageID == ids[3] }
            try await env.eventually("the app to exit") { try env.tasks().isEmpty }
        }
    }

    @Test func killNineOfTheSchedulerBetweenMessagesLosesNothing() async throws {
        let env = try TestEnvironment()
        try await Self.withServer { server in
            try Self.addSubscribedApp(env, url: server.url(of: Self.topic))
            var daemon = try env.startDaemon()
            defer { daemon.stop() }
            try await env.eventually("the stream to open") { Self.status(env)?.state == .connected }
            let first = server.publish(topic: Self.topic, message: Self.storm)
            try await env.eventually("the first push") { Self.received(env, first) == 1 }
            try await env.eventually("its cursor") { Self.status(env)?.lastMessageID == first }

            daemon.crash()
            try await env.eventually("the stream to drop with the scheduler") { server.openStreams(of: Self.topic) == 0 }
            #expect(Self.status(env)?.state == .connected, "a killed scheduler leaves its last word in the file")
            #expect(try Self.shownState(env) == "stopped", "bgctl apps does not believe it with no scheduler running")
            let missed = [server.publish(topic: Self.topic, message: Self.storm),
                          server.publish(topic: Self.topic, message: Self.storm)]
            daemon = try env.startDaemon()
            try await env.eventually("the pushes published while it was down") { missed.allSatisfy { Self.received(env, $0) >= 1 } }
            #expect(server.subscribeRequests.map(\.since) == [nil, first], "the restart resumes after the cursor")
            #expect(([first] + missed).map { Self.received(env, $0) } == [1, 1, 1])
            #expect(env.events(.pushDropped).isEmpty)
            try await env.eventually("the app to exit") { try env.tasks().isEmpty }
            #expect(try Self.shownState(env) == "connected")
            #expect(daemon.stop() == 0, "SIGTERM stops the scheduler with its stream open")
            try await env.eventually("the stream to close with it") { server.openStreams(of: Self.topic) == 0 }
            #expect(env.events(.daemonStopped).count == 1)
            #expect(try Self.shownState(env) == "stopped")
            let text = try env.bgctl("apps")
            #expect(text.stdout.contains(": stopped"), "\(text.stdout)")
        }
    }

    @Test func garbageHugeAndHalfLinesAreEventsAndTheStreamRecovers() async throws {
        let env = try TestEnvironment()
        try await Self.withServer { server in
            try Self.addSubscribedApp(env, url: server.url(of: Self.topic))
            let daemon = try env.startDaemon()
            defer { daemon.stop() }
            let faults: [(LineFault, String)] = [
                (.garbage, "not an ntfy JSON event: 'this is not json {'"),
                (.huge(bytes: 70_000), "a line of more than 65536 bytes"),
                (.closeMidLine, "in the middle of a line"),
            ]
            for (number, (fault, reason)) in faults.enumerated() {
                try await env.eventually("stream \(number + 1) to open") {
                    server.subscribeRequests.count == number + 1 && server.openStreams(of: Self.topic) == 1
                        && Self.status(env)?.state == .connected
                }
                server.inject(fault, topic: Self.topic)
                try await env.eventually("the event for \(fault)") { !Self.subscriptionEvents(env, containing: reason).isEmpty }
            }
            try await env.eventually("the stream to come back", timeout: 15) {
                server.openStreams(of: Self.topic) == 1 && Self.status(env)?.state == .connected
            }
            let id = server.publish(topic: Self.topic, message: Self.storm)
            try await env.eventually("a push after the faults") { Self.received(env, id) == 1 }
            #expect(env.events(.pushReceived).count == 1, "no bad line became a push")
            #expect(Self.status(env)?.lastError?.contains("in the middle of a line") == true)
            #expect(daemon.isRunning)
            try await env.eventually("the app to exit") { try env.tasks().isEmpty }
        }
    }

    @Test func aRefusedTokenShowsFailingWithTheErrorUntilTheFileIsRight() async throws {
        let env = try TestEnvironment()
        try await Self.withServer { server in
            var faults = server.faults
            faults.requiredAuthorization = "Bearer tk_right"
            server.faults = faults
            let tokenFile = "\(env.root)/ntfy-token"
            try "Bearer tk_wrong\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            chmod(tokenFile, 0o600)
            try Self.addSubscribedApp(env, url: server.url(of: Self.topic), authorizationFile: tokenFile)
            let daemon = try env.startDaemon()
            defer { daemon.stop() }
            // The stream writes its status file before it reports the event, which a later commit appends.
            try await env.eventually("the subscription to fail twice") {
                (Self.status(env)?.failures ?? 0) >= 2 && !Self.subscriptionEvents(env, containing: "failed (2 in a row)").isEmpty
            }
            let failing = try #require(Self.status(env))
            #expect(failing.state == .failing)
            #expect(failing.lastError == "the server answered HTTP 401 Unauthorized")
            #expect(failing.nextAttemptAt != nil)
            #expect(server.subscribeRequests.first?.authorization == "Bearer tk_wrong", "trimmed, one line")
            #expect(!Self.subscriptionEvents(env, containing: "failed (2 in a row)").isEmpty)
            let apps = try env.bgctl("apps", "--json")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])
            let shown = try #require(((report["apps"] as? [[String: Any]])?.first?["pushSubscriptions"] as? [[String: Any]])?.first)
            #expect(shown["state"] as? String == "failing", "bgctl apps shows it: \(shown)")
            #expect(shown["lastError"] as? String == "the server answered HTTP 401 Unauthorized")

            // Each refused request is one failure waited out (backoff, not a tight loop), however
            // long a loaded machine takes to get here.
            let failures = Self.status(env)?.failures ?? 0
            let refused = server.subscribeRequests.count
            #expect(refused <= failures + 1, "backoff, not a tight loop: \(refused) requests for \(failures) failures")
            try "Bearer tk_right".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            chmod(tokenFile, 0o600)
            try await env.eventually("the subscription to connect", timeout: 40) { Self.status(env)?.state == .connected }
            #expect(Self.status(env)?.failures == 0)
            #expect(server.subscribeRequests.last?.authorization == "Bearer tk_right")
            // The right token is taken at the next attempt: at most one more refusal in flight.
            #expect(server.subscribeRequests.count <= refused + 2, "\(server.subscribeRequests.count) requests after \(refused)")
        }
    }

    @Test func aTokenFileOthersCanWriteIsRefusedWithAClearError() async throws {
        let env = try TestEnvironment()
        try await Self.withServer { server in
            let tokenFile = "\(env.root)/ntfy-token"
            try "Bearer tk_x".write(toFile: tokenFile, atomically: true, encoding: .utf8)
            chmod(tokenFile, 0o666)
            try Self.addSubscribedApp(env, url: server.url(of: Self.topic), authorizationFile: tokenFile)
            let daemon = try env.startDaemon()
            defer { daemon.stop() }
            try await env.eventually("the subscription to fail") { Self.status(env)?.state == .failing }
            let error = try #require(Self.status(env)?.lastError)
            #expect(error.hasPrefix("authorizationFile: \(tokenFile)"), "\(error)")
            #expect(!error.contains("tk_x"), "the secret never appears")
            #expect(server.subscribeRequests.isEmpty, "nothing was sent without the token")
        }
    }

    @Test func aSubscriptionThatIsNotHTTPIsAManifestProblem() throws {
        let env = try TestEnvironment()
        try PushTests.addAlertsApp(env)
        try Self.writeManifest(env, push: ["ftp://x/alerts"])
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let problems = env.events(.manifestError).map(\.message)
        #expect(problems.contains { $0.contains("push subscription 'ftp://x/alerts' is not an http or https URL") }, "\(problems)")
        #expect(!StateFiles.exists(env.paths.subscriptions(of: try Identifier(validating: Self.app))))
    }
}
