import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// VoIP pushes end to end: the real scheduler, `bgctl push --type voip`, and the fixture app
/// registered with `PushRegistry`, reporting its calls with `CallProvider` (the notification
/// shown through a fake `notify-send` on its PATH) or not.
@Suite struct VoIPCallTests {
    static let modes = ["fetch", "processing", "remote-notification"]

    /// The fixture in `voip report|silent` behind a script that puts a fake `notify-send` first
    /// on its PATH (it writes its arguments to ``notifyArguments(_:)``) and leaves it no session bus.
    private func addVoIPFixture(_ env: TestEnvironment, behaviour: String) throws {
        let bin = "\(env.root)/fakebin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let fake = "\(bin)/notify-send"
        try "#!/bin/sh\nprintf '%s\\n' \"$@\" > '\(env.root)/notify-send.args'\n".write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        try env.addApp(TestEnvironment.fixtureID, identifiers: [TestEnvironment.refreshID], modes: Self.modes, script: """
            export PATH='\(bin)':"$PATH"
            export DBUS_SESSION_BUS_ADDRESS=
            exec '\(TestEnvironment.binaries)/TaskAppFixture' voip \(behaviour) '--record=\(env.fixtureRecord)' '--ids=\(TestEnvironment.refreshID)'
            """)
    }

    private func notifyArguments(_ env: TestEnvironment) -> [String] {
        ((try? String(contentsOfFile: "\(env.root)/notify-send.args", encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Ends whatever the fixture started that still runs (only on a failure: the scheduler ends them).
    private func endFixtureProcesses(_ env: TestEnvironment) {
        for pid in Set(env.fixtureEvents().map(\.pid)) where processIsAlive(pid) { kill(pid, SIGKILL) }
    }

    @Test func aVoIPPushLaunchesAStoppedAppThatReportsTheCallAndShowsIt() throws {
        let env = try TestEnvironment()
        // Generous: a slow machine must not turn a report into a strike.
        try env.writeSettings(["voipReportSeconds": 120, "pushBudgetPerHour": 1])
        try addVoIPFixture(env, behaviour: "report")
        let daemon = try env.startDaemon()
        defer {
            endFixtureProcesses(env)
            daemon.stop()
        }

        let uuid = "6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2"
        let sent = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip",
                                 "--payload", #"{"aps":{"content-available":1},"handle":"+1 555 0100","uuid":"\#(uuid)"}"#)
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stdout.contains("launched \(TestEnvironment.fixtureID) (pid"), "\(sent)")
        try env.waitUntil("the app to report, try again and exit") { !env.fixtureEvents("exiting").isEmpty }

        let received = try #require(env.fixtureEvents("voip-received").first)
        #expect(received.launchReason == "voipPush")
        #expect(received.detail == "+1 555 0100")
        let reported = try #require(env.fixtureEvents("call-reported").first, "\(env.fixtureEvents())")
        #expect(reported.detail == "notify-send", "no session bus, so notify-send showed it")
        #expect(notifyArguments(env).contains("Incoming call"), "\(notifyArguments(env))")
        #expect(notifyArguments(env).contains("+1 555 0100"))
        #expect(notifyArguments(env).contains("--app-name=Fixture Phone"))
        let second = try #require(env.fixtureEvents("second-report-refused").first, "\(env.fixtureEvents())")
        #expect(second.detail.contains("alreadyReported"), "\(second.detail)")
        #expect(second.detail.contains("already reported"), "a readable error: \(second.detail)")

        let event = try #require(env.events(.callReported).first)
        #expect(event.reason == "notify-send")
        #expect(event.message.contains(uuid) && event.message.contains("+1 555 0100"), "\(event.message)")
        #expect(env.events(.callReported).count == 1)
        let delivered = try #require(env.events(.pushDelivered).first)
        #expect(delivered.reason == "voipPush")
        #expect(delivered.pid == received.pid)
        try env.waitUntil("the push's task to complete") { !env.events(.completed).isEmpty }
        #expect(env.events(.voipStrike).isEmpty)
        #expect(env.events(.killed).isEmpty)

        // Outside the budget (one an hour here): a second VoIP push goes at once all the same.
        let again = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip")
        #expect(again.stdout.contains("launched"), "\(again)")
        try env.waitUntil("the second launch to exit") { env.fixtureEvents("exiting").count == 2 }
        let apps = try env.bgctl("apps", "--json")
        let entry = try #require(((try JSONSerialization.jsonObject(with: Data(apps.stdout.utf8)) as? [String: Any])?["apps"] as? [[String: Any]])?.first)
        #expect(entry["voipState"] as? String == "ok", "\(entry)")
        #expect(entry["pushBudgetLeft"] as? Int == 1, "no VoIP push took from the budget")
    }

    /// A running process with only a background push handler is not handed a VoIP push (it has
    /// no `PushRegistry` to take it, and would be killed for a call it could not report): the
    /// push launches a process of its own, and the running one is left alone.
    @Test func aVoIPPushIsNotHandedToAProcessWithOnlyABackgroundPushHandler() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["voipReportSeconds": 120])
        // The fixture itself as the executable (not behind a script): the scheduler attaches a
        // process a person started only when it runs the app's executable. Launched, it is the
        // VoIP app that reports its call; started by hand below, an app with a push handler only.
        try env.addLibraryApp(TestEnvironment.fixtureID, product: "TaskAppFixture",
                              arguments: ["voip", "report", "--record=\(env.fixtureRecord)", "--ids=\(TestEnvironment.refreshID)"],
                              identifiers: [TestEnvironment.refreshID], modes: Self.modes)
        let daemon = try env.startDaemon()
        defer {
            endFixtureProcesses(env)
            daemon.stop()
        }
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
        let attached = try #require(env.events(.attached).first)
        #expect(attached.message.contains("pushes") && !attached.message.contains("VoIP pushes"), "\(attached.message)")

        let sent = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip")
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stdout.contains("launched \(TestEnvironment.fixtureID) (pid"), "\(sent)")
        try env.waitUntil("the launched app to report and exit") { !env.fixtureEvents("exiting").isEmpty }
        let received = try #require(env.fixtureEvents("voip-received").first)
        #expect(received.pid != app)
        #expect(received.launchReason == "voipPush")
        #expect(env.fixtureEvents("push-received").isEmpty, "the running process got nothing")
        #expect(env.events(.callReported).count == 1)
        #expect(env.events(.killed).isEmpty)
        #expect(env.events(.voipStrike).isEmpty)
        #expect(processIsAlive(app))
    }

    /// A running process registered with `PushRegistry` attaches offering VoIP pushes
    /// (`acceptsVoIPPushes`) and is handed them; it reports the call, so nothing is killed.
    @Test func aVoIPPushIsHandedToARunningProcessRegisteredForThem() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["voipReportSeconds": 120])
        try env.addLibraryApp(TestEnvironment.fixtureID, product: "TaskAppFixture",
                              arguments: ["voip", "report", "--record=\(env.fixtureRecord)", "--ids=\(TestEnvironment.refreshID)"],
                              identifiers: [TestEnvironment.refreshID], modes: Self.modes)
        let daemon = try env.startDaemon()
        defer {
            endFixtureProcesses(env)
            daemon.stop()
        }
        var environment = env.appEnvironment
        environment["BGTASK_APP_ID"] = TestEnvironment.fixtureID
        environment["DBUS_SESSION_BUS_ADDRESS"] = ""
        let app = try Spawn.start(TestEnvironment.binaries + "/TaskAppFixture",
                                  ["voip", "report", "--stay", "--record=\(env.fixtureRecord)", "--ids=\(TestEnvironment.refreshID)"],
                                  environment: environment, stdout: env.root + "/voip.out", stderr: env.root + "/voip.err")
        defer {
            kill(app, SIGKILL)
            _ = Spawn.wait(app)
        }
        try env.waitUntil("the app to attach") { env.events(.attached).contains { $0.pid == app } }
        let attached = try #require(env.events(.attached).first)
        #expect(attached.message.contains("VoIP pushes"), "\(attached.message)")

        let sent = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip")
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stdout.contains("handed to running \(TestEnvironment.fixtureID) (pid \(app))"), "\(sent)")
        try env.waitUntil("the call to be reported") { !env.events(.callReported).isEmpty }
        #expect(env.fixtureEvents("voip-received").map(\.pid) == [app])
        #expect(env.events(.launched).isEmpty, "nothing was launched")
        #expect(env.events(.killed).isEmpty)
        #expect(processIsAlive(app))
    }

    @Test func anAppThatDoesNotReportIsKilledWithReasonVoipNotReported() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["voipReportSeconds": 1, "voipStrikes": 2])
        try addVoIPFixture(env, behaviour: "silent")
        let daemon = try env.startDaemon()
        defer {
            endFixtureProcesses(env)
            daemon.stop()
        }

        let sent = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip")
        #expect(sent.status == 0, "\(sent)")
        try env.waitUntil("the push to arrive") { !env.fixtureEvents("voip-received").isEmpty }
        let pid = try #require(env.fixtureEvents("voip-received").first?.pid)
        try env.waitUntil("the app to be killed", timeout: 30) { !env.events(.killed).isEmpty }
        let killed = try #require(env.events(.killed).first)
        #expect(killed.reason == "voipNotReported")
        #expect(killed.pid == pid)
        try env.waitUntil("the process to be gone") { !processIsAlive(pid) }
        let strike = try #require(env.events(.voipStrike).first)
        #expect(strike.message.contains("1 of 2"), "\(strike.message)")
        #expect(env.fixtureEvents("exiting").isEmpty, "it did not end by itself")
        #expect(env.events(.callReported).isEmpty)

        // A second failure blocks it; the next VoIP push is dropped with an event.
        _ = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip")
        try env.waitUntil("the second strike", timeout: 30) { !env.events(.voipBlocked).isEmpty }
        let dropped = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip")
        #expect(dropped.status == 0)
        #expect(dropped.stdout.hasPrefix("dropped"), "\(dropped)")
        #expect(env.events(.pushDropped).last?.reason == "voipBlocked")
        let apps = try env.bgctl("apps")
        #expect(apps.stdout.contains("blocked"), "\(apps.stdout)")
        // A person using the app lifts it.
        #expect(try env.bgctl("app", "used", TestEnvironment.fixtureID).status == 0)
        try env.waitUntil("the block to be lifted") { !env.events(.voipUnblocked).isEmpty }
    }

    @Test func aVoIPPushToADisabledAppIsDropped() throws {
        let env = try TestEnvironment()
        try addVoIPFixture(env, behaviour: "report")
        let daemon = try env.startDaemon()
        defer {
            endFixtureProcesses(env)
            daemon.stop()
        }
        #expect(try env.bgctl("app", "disable", TestEnvironment.fixtureID).status == 0)
        let sent = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "voip")
        #expect(sent.status == 0, "\(sent)")
        #expect(sent.stdout.hasPrefix("dropped"), "\(sent)")
        let dropped = try #require(env.events(.pushDropped).first)
        #expect(dropped.reason == "appDisabled")
        #expect(env.events(.pushDelivered).isEmpty)
        #expect(env.fixtureEvents().isEmpty, "nothing was launched")
    }

    /// `apps/<app>.json` is input: a report owed by a pid the scheduler does not supervise (here
    /// a process of the test's own) is a strike, never a signal to that process; pid 1 and a
    /// count past every bound are read leniently.
    @Test func aRecordNamingAProcessTheSchedulerDoesNotSuperviseKillsNothing() throws {
        let env = try TestEnvironment()
        try addVoIPFixture(env, behaviour: "report")
        let bystander = try Spawn.start("/bin/sleep", ["300"], environment: ProcessInfo.processInfo.environment,
                                        stdout: "/dev/null", stderr: "/dev/null")
        defer {
            kill(bystander, SIGKILL)
            _ = Spawn.wait(bystander)
        }
        try FileManager.default.createDirectory(atPath: "\(env.state)/apps", withIntermediateDirectories: true)
        for (app, pid) in [(TestEnvironment.fixtureID, bystander), ("com.example.other", 1)] {
            let record = #"{"enabled":true,"id":"\#(app)","killCount":0,"launchCount":0,"throttleLevel":0,"voip":{"strikes":9223372036854775807,"reportDueBy":"2026-01-01T00:00:00Z","deliveredToPID":\#(pid)}}"#
            try Data(record.utf8).write(to: URL(fileURLWithPath: "\(env.state)/apps/\(app).json"))
        }
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("the overdue report to be a strike") { !env.events(.voipStrike).isEmpty }
        let strike = try #require(env.events(.voipStrike).first { $0.app?.rawValue == TestEnvironment.fixtureID })
        #expect(strike.message.contains("its process had already ended"), "\(strike.message)")
        #expect(env.events(.killed).isEmpty)
        #expect(processIsAlive(bystander))
        #expect(try env.bgctl("status").status == 0, "the scheduler runs on")
        let quarantined = (try? FileManager.default.contentsOfDirectory(atPath: "\(env.state)/quarantine")) ?? []
        #expect(quarantined.isEmpty, "\(quarantined)")
    }

    @Test func badTypesHandlesAndSecondReportsGetOneClearLine() throws {
        let env = try TestEnvironment()
        try addVoIPFixture(env, behaviour: "report")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let badType = try env.bgctl("push", TestEnvironment.fixtureID, "--type", "ring")
        #expect(badType.status == 2, "\(badType)")
        #expect(badType.stderr.contains("push type must be background or voip, not 'ring'"), "\(badType.stderr)")
        let badHandle = try env.bgctl("report-call", TestEnvironment.fixtureID, "6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2", "bob;rm -rf")
        #expect(badHandle.status != 0)
        #expect(badHandle.stderr.contains("call handle may have letters, digits"), "\(badHandle.stderr)")
        let badUUID = try env.bgctl("report-call", TestEnvironment.fixtureID, "12345", "bob")
        #expect(badUUID.status != 0)
        #expect(badUUID.stderr.contains("call uuid must be a UUID"), "\(badUUID.stderr)")

        let first = try env.bgctl("report-call", TestEnvironment.fixtureID, "6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2", "bob", "--notifier", "log")
        #expect(first.status == 0, "\(first)")
        let twice = try env.bgctl("report-call", TestEnvironment.fixtureID, "6f1c2a3b-0d4e-4f5a-8b6c-7d8e9fa0b1c2", "bob")
        #expect(twice.status == 1, "\(twice)")
        #expect(twice.stderr.split(separator: "\n").count == 1)
        #expect(twice.stderr.contains("alreadyReported: call 6F1C2A3B-0D4E-4F5A-8B6C-7D8E9FA0B1C2 was already reported"), "\(twice.stderr)")

        // The inbox side: a command written by any program with a bad push type is rejected.
        let command = #"{"id":"0000000000000001-0000000000000001","issuedAt":"2026-11-22T10:00:00Z","type":"push","app":"\#(TestEnvironment.fixtureID)","payload":"{\"aps\":{\"content-available\":1}}","pushType":"ring"}"#
        let name = "0000000000000001-0000000000000001.json"
        try command.write(toFile: "\(env.state)/inbox/tmp/\(name)", atomically: false, encoding: .utf8)
        #expect(rename("\(env.state)/inbox/tmp/\(name)", "\(env.state)/inbox/new/\(name)") == 0)
        try env.waitUntil("the bad command to be rejected") { !env.events(.commandRejected).isEmpty }
        #expect(env.events(.commandRejected).first?.message.contains("push type must be background or voip") == true,
                "\(env.events(.commandRejected))")
        #expect(env.events(.pushReceived).isEmpty)
    }
}
