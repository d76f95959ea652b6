import Foundation
import TestSupport
import Testing
import TaskState

/// `bgctl push` against the real scheduler and real (bash) apps: the launch path, the budget,
/// coalescing, `kill -9` with held pushes, the switched-off app, bad payloads.
@Suite struct PushTests {
    static let app = "com.example.alerts"

    /// An app that records how it was woken and the payload in its task file, then answers `noData`.
    static func addAlertsApp(_ env: TestEnvironment) throws {
        try env.addApp(app, identifiers: ["com.example.alerts.refresh"], modes: ["fetch", "remote-notification"], script: """
        id="$BGTASK_TASK_IDS"
        echo "start $BGTASK_LAUNCH_REASON $BGTASK_TASK_KINDS $id $$" >> "$OUT"
        echo "payload $BGTASK_PUSH_PAYLOAD" >> "$OUT"
        "$BGCTL" complete "$id" --no-data >> "$OUT" 2>&1
        """)
    }

    static func pushes(_ env: TestEnvironment) throws -> [[String: Any]] {
        try env.list()["pushes"] as? [[String: Any]] ?? []
    }

    @Test func aPushLaunchesAStoppedAppWithItsPayloadAndTheAnswerIsRecorded() throws {
        let env = try TestEnvironment()
        try Self.addAlertsApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let sent = try env.bgctl("push", Self.app, "--payload", #"{"aps":{"content-available":1},"storm":"north"}"#)
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stdout.hasPrefix("delivered push-"), "\(sent)")
        #expect(sent.stdout.contains("launched \(Self.app) (pid"), "\(sent)")
        try env.waitUntil("the handler's answer") { !env.events(.completed).isEmpty }
        let lines = env.output(of: Self.app)
        let start = try #require(lines.first).split(separator: " ").map(String.init)
        #expect(start[0...2] == ["start", "remoteNotification", "remoteNotification"])
        #expect(start[3].hasPrefix("push-"))
        #expect(lines.contains(#"payload {"aps":{"content-available":1},"storm":"north"}"#), "the launch carries the payload: \(lines)")
        let task = try #require(env.events(.pushDelivered).first?.identifier)
        #expect(env.events(.completed).first?.identifier == task)
        #expect(env.events(.pushReceived).count == 1)
        #expect(env.events(.pushDelivered).first?.identifier?.rawValue == start[3])
        #expect(env.events(.completed).first?.reason == "noData")
        let apps = try env.bgctl("apps", "--json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])
        let entry = try #require((report["apps"] as? [[String: Any]])?.first)
        #expect(entry["lastPushResult"] as? String == "noData")
        #expect(entry["pushBudgetPerHour"] as? Int == 3)
        #expect(entry["pushBudgetLeft"] as? Int == 2)
        try env.waitUntil("the app to exit") { try env.tasks().isEmpty }
    }

    @Test func theBudgetHoldsPushesWhichCoalesceSurviveKillNineAndDropWhenTheAppIsSwitchedOff() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["pushBudgetPerHour": 1])
        try Self.addAlertsApp(env)
        var daemon = try env.startDaemon()
        defer { daemon.stop() }

        #expect(try env.bgctl("push", Self.app).status == 0)
        try env.waitUntil("the first push to be answered") { !env.events(.completed).isEmpty }
        let held = try env.bgctl("push", Self.app, "--payload", #"{"aps":{"content-available":1},"n":1}"#)
        #expect(held.status == 0, "\(held)")
        #expect(held.stdout.hasPrefix("held push-"), "\(held)")
        #expect(held.stdout.contains("push budget"), "\(held)")
        #expect(try env.bgctl("push", Self.app, "--payload", #"{"aps":{"content-available":1},"n":2}"#).status == 0)
        var list = try Self.pushes(env)
        #expect(list.count == 1, "the newer push replaced the held one")
        let newest = try #require(list.first)
        #expect(newest["coalescedCount"] as? Int == 1)
        #expect(newest["blockers"] as? [String] == ["pushBudget"])
        #expect((newest["payload"] as? String)?.contains(#""n":2"#) == true)
        #expect(env.events(.pushCoalesced).count == 1)

        daemon.crash()
        daemon = try env.startDaemon()
        list = try Self.pushes(env)
        #expect(list.map { $0["id"] as? String } == [newest["id"] as? String], "the held push survives kill -9")

        #expect(try env.bgctl("app", "disable", Self.app).status == 0)
        #expect(try Self.pushes(env).isEmpty)
        #expect(env.events(.pushDropped).count == 1)
        let refused = try env.bgctl("push", Self.app)
        #expect(refused.status == 0)
        #expect(refused.stdout == "dropped: background work is switched off for \(Self.app)\n")
        #expect(env.output(of: Self.app).filter { $0.hasPrefix("start") }.count == 1, "only the first push ran")
    }

    @Test func expirationZeroIsDeliveredNowOrDropped() throws {
        let env = try TestEnvironment()
        try Self.addAlertsApp(env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.bgctl("conditions", "set", "lowpower=on").status == 0)
        let dropped = try env.bgctl("push", Self.app, "--priority", "5", "--expiration", "0")
        #expect(dropped.status == 0, "\(dropped)")
        #expect(dropped.stdout == "dropped: expiration 0 and it cannot be delivered now (low power)\n")
        let later = try env.bgctl("push", Self.app, "--priority", "5", "--expiration", "+600", "--collapse-id", "weather")
        #expect(later.stdout.hasPrefix("held push-"), "\(later)")
        let held = try #require(try Self.pushes(env).first)
        #expect(held["collapseId"] as? String == "weather")
        #expect(held["priority"] as? Int == 5)
        #expect(held["expiresAt"] is String)
        #expect(held["blockers"] as? [String] == ["lowPower"])
        #expect(try env.bgctl("conditions", "clear").status == 0)
        try env.waitUntil("the held push to be delivered once low power ends") { !env.events(.completed).isEmpty }
        #expect(try Self.pushes(env).isEmpty)
    }

    @Test(arguments: [
        (["--payload", "[1]"], "bgctl: push payload must be a JSON object, like {\"aps\":{\"content-available\":1}}\n"),
        (["--payload", #"{"aps":{"alert":"hi"}}"#], "bgctl: push payload has no \"aps\":{\"content-available\":1}; only background pushes are delivered\n"),
        (["--payload", "{"], "bgctl: push payload is not valid JSON\n"),
        (["--payload", #"{"aps":{"content-available":1},"x":"\#(String(repeating: "y", count: 4100))"}"#],
         "bgctl: push payload is 4138 bytes; at most 4096 are allowed\n"),
    ])
    func badPayloadsAreRefusedWithOneLine(arguments: [String], message: String) throws {
        let env = try TestEnvironment()
        try Self.addAlertsApp(env)
        let result = try env.run(TestEnvironment.binaries + "/bgctl", ["push", Self.app] + arguments + ["--state", env.state, "--config", env.config])
        #expect(result.status == 1)
        #expect(result.stderr == message)
        #expect(try Inbox(paths: env.paths).waiting().isEmpty, "nothing was written")
    }

    @Test func anEndlessStandardInputIsRefusedAtTheBound() throws {
        // `--payload-file -` fed forever (`< /dev/zero`): read up to 1 MiB, then one line and exit 1,
        // not a read that fills memory until the machine gives out.
        let env = try TestEnvironment()
        try Self.addAlertsApp(env)
        let command = "exec '\(TestEnvironment.binaries)/bgctl' push \(Self.app) --payload-file - --state '\(env.state)' --config '\(env.config)' < /dev/zero"
        let result = try BoundedProcess.run(["/bin/sh", "-c", command], timeout: 60)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "bgctl: cannot read --payload-file: standard input holds more than 1048576 bytes\n", "\(result)")
        #expect(try Inbox(paths: env.paths).waiting().isEmpty, "nothing was written")
        // A payload on standard input that ends is read as before.
        let file = env.root + "/payload.json"
        try Data(#"{"aps":{"content-available":1},"x":"\#(String(repeating: "y", count: 4100))"}"#.utf8).write(to: URL(fileURLWithPath: file))
        let piped = try BoundedProcess.run(["/bin/sh", "-c", "exec '\(TestEnvironment.binaries)/bgctl' push \(Self.app) --payload-file - --state '\(env.state)' --config '\(env.config)' < '\(file)'"], timeout: 60)
        #expect(piped.status == 1 && piped.stderr == "bgctl: push payload is 4138 bytes; at most 4096 are allowed\n", "\(piped)")
    }

    @Test func aPushForAnAppWithoutTheModeOrUnknownIsRefused() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.plain", identifiers: ["com.example.plain.refresh"], script: "exit 0")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let plain = try env.bgctl("push", "com.example.plain")
        #expect(plain.status == 1)
        #expect(plain.stderr == "bgctl: notPermitted: com.example.plain's manifest does not declare the 'remote-notification' background mode needed for pushes\n")
        let unknown = try env.bgctl("push", "com.example.nobody")
        #expect(unknown.status == 1)
        #expect(unknown.stderr == "bgctl: unknownApp: app com.example.nobody has no usable manifest\n")
    }
}
