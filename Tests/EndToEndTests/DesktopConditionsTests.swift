import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Conditions from the desktop's own services: a private system bus per test, python-dbusmock's
/// UPower, power-profiles-daemon and logind on it, and the real `bgtaskd` told its address.
/// Every change is a signal the scheduler hears; nothing here waits for a probe's timer (the
/// recheck is an hour).
@Suite struct DesktopConditionsTests {
    static let upower = "org.freedesktop.UPower"
    static let profiles = "net.hadess.PowerProfiles"
    static let login = "org.freedesktop.login1"

    /// An app whose script records its start and completes `identifier`.
    static func addRecordingApp(_ env: TestEnvironment, _ id: String, _ identifier: String) throws {
        try env.addApp(id, identifiers: [identifier], script: """
        echo "start" >> "$OUT"
        "$BGCTL" complete \(identifier) --success
        """)
    }

    /// `conditions.json` as the scheduler last wrote it.
    static func conditions(_ env: TestEnvironment) throws -> ConditionsRecord? {
        guard let data = try? StateFiles.read(env.paths.conditions) else { return nil }
        return try JSONFormat.decode(ConditionsRecord.self, from: data)
    }

    static func blockers(_ env: TestEnvironment) throws -> [String] {
        try env.requests().first?["blockers"] as? [String] ?? []
    }

    @Test func unpluggingHoldsAProcessingRequestThatRequiresPowerAndPluggingInRunsIt() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        try Self.addRecordingApp(env, "com.example.backup", "com.example.backup.nightly")
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("upower", parameters: ["OnBattery": false])
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
        try env.waitUntil("power from UPower") { try Self.conditions(env)?.sources?["power"] == "upower" }
        #expect(try env.bgctl("conditions", "set", "idle=yes").status == 0)

        // Held by its date, so that only power can add a blocker.
        #expect(try env.bgctl("submit", "--app", "com.example.backup", "--id", "com.example.backup.nightly",
                              "--kind", "processing", "--requires-power", "--earliest", "+3600").status == 0)
        #expect(try Self.blockers(env) == ["earliestBeginDate"])

        try bus.set(Self.upower, "/org/freedesktop/UPower", Self.upower, "OnBattery", "b", "true")
        try env.waitUntil("the unplug to hold the request") { try Self.blockers(env) == ["earliestBeginDate", "externalPower"] }
        // A commit writes its files before it appends its events: wait for the event too.
        try env.waitUntil("the unplug's event") {
            env.events(.conditionsChanged).contains { $0.message.contains("power=battery") && $0.reason == "probe" }
        }
        let status = try env.bgctl("status")
        #expect(status.stdout.contains("conditions: power=battery"), "\(status)")
        #expect(status.stdout.contains("sources: power=upower network=files idle=files lowpower=upower"), "\(status)")

        // On battery, a request that is due waits; plugged in, it runs.
        #expect(try env.bgctl("submit", "--app", "com.example.backup", "--id", "com.example.backup.nightly",
                              "--kind", "processing", "--requires-power").status == 0)
        #expect(try Self.blockers(env) == ["externalPower"])
        #expect(env.output(of: "com.example.backup").isEmpty)
        try bus.set(Self.upower, "/org/freedesktop/UPower", Self.upower, "OnBattery", "b", "false")
        try env.waitUntil("the launch once plugged in") { env.output(of: "com.example.backup") == ["start"] }
        try env.waitUntil("its completion") { !env.events(.completed).isEmpty }
    }

    @Test func thePowerSaverProfileHoldsAnAppRefresh() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        try Self.addRecordingApp(env, "com.example.news", "com.example.news.refresh")
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("power_profiles_daemon")
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
        try env.waitUntil("low power from power-profiles-daemon") {
            try Self.conditions(env)?.sources?["lowpower"]?.hasPrefix("power-profiles-daemon") == true
        }
        #expect(try env.bgctl("submit", "--app", "com.example.news", "--id", "com.example.news.refresh",
                              "--kind", "refresh", "--earliest", "+3600").status == 0)
        #expect(try Self.blockers(env) == ["earliestBeginDate"])

        try bus.set(Self.profiles, "/net/hadess/PowerProfiles", Self.profiles, "ActiveProfile", "s", "power-saver")
        try env.waitUntil("power-saver to hold the refresh") { try Self.blockers(env) == ["earliestBeginDate", "lowPower"] }
        #expect(try Self.conditions(env)?.effective.lowPower == true)

        try bus.set(Self.profiles, "/net/hadess/PowerProfiles", Self.profiles, "ActiveProfile", "s", "balanced")
        try env.waitUntil("balanced to release it") { try Self.blockers(env) == ["earliestBeginDate"] }
    }

    @Test func theIdleHintOfTheUsersSessionRunsAProcessingRequest() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        try Self.addRecordingApp(env, "com.example.index", "com.example.index.rebuild")
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("logind")
        // A session of the user the scheduler runs as, busy to begin with.
        #expect(try bus.busctl(["call", Self.login, "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "AddSession",
                                "ssusb", "c1", "seat0", "\(getuid())", "someone", "true"]).status == 0)
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
        try env.waitUntil("idle from logind") { try Self.conditions(env)?.sources?["idle"] == "logind" }
        #expect(try Self.conditions(env)?.effective.idle == false)

        #expect(try env.bgctl("submit", "--app", "com.example.index", "--id", "com.example.index.rebuild",
                              "--kind", "processing").status == 0)
        #expect(try Self.blockers(env) == ["idle"])
        #expect(env.output(of: "com.example.index").isEmpty)

        try bus.set(Self.login, "/org/freedesktop/login1/session/c1", "org.freedesktop.login1.Session", "IdleHint", "b", "true")
        try env.waitUntil("the launch once the person is away") { env.output(of: "com.example.index") == ["start"] }
        try env.waitUntil("its completion") { !env.events(.completed).isEmpty }
    }

    @Test func networkManagersConnectivityHoldsAndReleasesARequestThatRequiresNetwork() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        try Self.addRecordingApp(env, "com.example.sync", "com.example.sync.upload")
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("networkmanager")
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
        try env.waitUntil("network from NetworkManager") { try Self.conditions(env)?.sources?["network"] == "networkmanager" }
        #expect(try env.bgctl("conditions", "set", "idle=yes").status == 0)
        #expect(try env.bgctl("submit", "--app", "com.example.sync", "--id", "com.example.sync.upload",
                              "--kind", "processing", "--requires-network", "--earliest", "+3600").status == 0)
        #expect(try Self.blockers(env) == ["earliestBeginDate"])

        // NM_CONNECTIVITY_LIMITED: an interface is up, but the internet is not reachable.
        let manager = "org.freedesktop.NetworkManager"
        try bus.set(manager, "/org/freedesktop/NetworkManager", manager, "Connectivity", "u", "3")
        try env.waitUntil("limited connectivity to hold the request") { try Self.blockers(env) == ["earliestBeginDate", "network"] }
        try bus.set(manager, "/org/freedesktop/NetworkManager", manager, "Connectivity", "u", "4")
        try env.waitUntil("full connectivity to release it") { try Self.blockers(env) == ["earliestBeginDate"] }
    }

    @Test func aMeteredConnectionHoldsADiscretionaryTransferButNotAnOrdinaryOne() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        try Self.addRecordingApp(env, "com.example.photos", "com.example.photos.sync")
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("networkmanager")
        // The template has no `Metered`: added before the scheduler starts, as NM_METERED_GUESS_NO.
        let manager = "org.freedesktop.NetworkManager"
        #expect(try bus.busctl(["call", manager, "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Mock", "AddProperty",
                                "ssv", manager, "Metered", "u", "4"]).status == 0)
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
        try env.waitUntil("metering from NetworkManager") { try Self.conditions(env)?.sources?["expensive"] == "networkmanager" }
        // Discretionary transfers also wait for external power: that is simulated, so only metering moves.
        #expect(try env.bgctl("conditions", "set", "power=ac").status == 0)
        for (id, extra) in [("album", ["--discretionary"]), ("thumbnail", [])] {
            let created = try env.run(TestEnvironment.binaries + "/bgctl",
                                      ["transfer", "download", "--app", "com.example.photos", "--id", id, "http://127.0.0.1:9/\(id)",
                                       "--to", "\(id).bin", "--earliest", "+3600", "--state", env.state, "--config", env.config] + extra)
            #expect(created.status == 0, "\(created)")
        }
        func blockers(_ id: String) throws -> [String] {
            let rows = try env.list()["transfers"] as? [[String: Any]] ?? []
            return rows.first { $0["identifier"] as? String == id }?["blockers"] as? [String] ?? []
        }
        #expect(try blockers("album") == ["earliestBeginDate"])

        // NM_METERED_YES: the discretionary one waits, the other does not.
        try bus.set(manager, "/org/freedesktop/NetworkManager", manager, "Metered", "u", "1")
        try env.waitUntil("metering to hold the discretionary transfer") { try blockers("album") == ["earliestBeginDate", "expensiveNetwork"] }
        #expect(try blockers("thumbnail") == ["earliestBeginDate"])
        #expect(try env.bgctl("status").stdout.contains("expensive=on"))

        try bus.set(manager, "/org/freedesktop/NetworkManager", manager, "Metered", "u", "2")
        try env.waitUntil("an unmetered network to release it") { try blockers("album") == ["earliestBeginDate"] }
    }

    @Test func aServiceThatDiesOrSendsNonsenseFallsBackToTheFilesAndTheSchedulerRunsOn() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        try Self.addRecordingApp(env, "com.example.backup", "com.example.backup.nightly")
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("upower", parameters: ["OnBattery": true])
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
        try env.waitUntil("power from UPower") { try Self.conditions(env)?.sources?["power"] == "upower" }
        #expect(try Self.conditions(env)?.probed.externalPower == false)

        bus.kill("upower")
        // A commit writes conditions.json before it appends its events: wait for both.
        try env.waitUntil("the files to take over") {
            try Self.conditions(env)?.sources?["power"] == "files" && env.events(.conditionsChanged).contains { $0.reason == "source" }
        }
        let changes = env.events(.conditionsChanged).filter { $0.reason == "source" }
        #expect(changes.count == 1)
        #expect(changes.first?.message.contains("power from files (was upower)") == true)
        #expect(daemon.log.contains("upower: not used"))

        // Back again (a restart): UPower decides once more.
        try bus.start("upower", parameters: ["OnBattery": true])
        try env.waitUntil("UPower again") { try Self.conditions(env)?.sources?["power"] == "upower" }
        #expect(try Self.conditions(env)?.probed.externalPower == false)

        // A value of the wrong type is nonsense: the files decide, and the log says why.
        try bus.set(Self.upower, "/org/freedesktop/UPower", Self.upower, "OnBattery", "s", "yes")
        try env.waitUntil("the files after nonsense") { try Self.conditions(env)?.sources?["power"] == "files" }
        #expect(daemon.log.contains("upower: not used (a value of another type"))

        // The scheduler is still at work.
        #expect(try env.bgctl("submit", "--app", "com.example.backup", "--id", "com.example.backup.nightly",
                              "--kind", "processing", "--earliest", "+3600").status == 0)
        #expect(try env.requests().count == 1)
        #expect(daemon.isRunning)
    }

    @Test func withNoSystemBusTheFilesDecideAndOneLineSaysSo() throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(env.root)/no-bus-here"])
        defer { daemon.stop() }
        let record = try #require(try Self.conditions(env))
        #expect(record.sources == ["power": "files", "lowpower": "files", "idle": "files", "network": "files", "expensive": "files"])
        #expect(daemon.log.components(separatedBy: "no system bus").count == 2, "one line: \(daemon.log)")
        // Overrides work as before.
        #expect(try env.bgctl("conditions", "set", "power=battery").status == 0)
        #expect(try Self.conditions(env)?.effective.externalPower == false)
        #expect(daemon.isRunning)
    }
}
