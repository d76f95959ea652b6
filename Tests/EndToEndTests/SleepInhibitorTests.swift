import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// logind's `PrepareForSleep` on a private system bus (python-dbusmock's logind): the real
/// `bgtaskd` holds a delay inhibitor, writes its state when a sleep is announced, releases the
/// inhibitor only then, and takes a new one after the resume.
@Suite struct SleepInhibitorTests {
    static let login = "org.freedesktop.login1"

    /// The inhibitors the mock holds, as `busctl` prints `ListInhibitors`.
    static func inhibitors(_ bus: PrivateSystemBus) throws -> String {
        try bus.busctl(["call", login, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "ListInhibitors"]).stdout
    }

    static func holdsOurs(_ bus: PrivateSystemBus) throws -> Bool {
        let listed = try inhibitors(bus)
        return listed.contains("\"sleep\" \"bgtaskd\"") && listed.contains("\"delay\"")
    }

    /// logind (the owner of its name) announces a sleep (`true`) or the resume (`false`), as the
    /// real one does: `PreparingForSleep` says so from then on, and `PrepareForSleep` tells.
    static func announce(_ bus: PrivateSystemBus, starting: Bool) throws {
        let set = try bus.busctl(["call", login, "/org/freedesktop/login1", "org.freedesktop.DBus.Properties", "Set",
                                  "ssv", "org.freedesktop.login1.Manager", "PreparingForSleep", "b", "\(starting)"])
        guard set.status == 0 else { throw TestFailure("cannot set PreparingForSleep: \(set)") }
        let sent = try bus.busctl(["call", login, "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "EmitSignal",
                                   "sssav", "org.freedesktop.login1.Manager", "PrepareForSleep", "b", "1", "b", "\(starting)"])
        guard sent.status == 0 else { throw TestFailure("cannot emit PrepareForSleep: \(sent)") }
    }

    /// The scheduler's unique name on the bus (`busctl list` names each connection's pid).
    static func uniqueName(of pid: pid_t, on bus: PrivateSystemBus) throws -> String {
        let listed = try bus.busctl(["list", "--unique", "--no-legend"]).stdout
        for line in listed.split(separator: "\n") {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            if columns.count >= 2, columns[1] == "\(pid)", columns[0].hasPrefix(":") { return String(columns[0]) }
        }
        throw TestFailure("no connection of pid \(pid) on the bus: \(listed)")
    }

    /// A private bus with logind's mock, and `bgtaskd` on it.
    static func start() throws -> (TestEnvironment, PrivateSystemBus, DaemonProcess) {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        let bus = try PrivateSystemBus(env)
        do {
            try bus.start("logind")
            return (env, bus, try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address]))
        } catch {
            bus.stop()
            throw error
        }
    }

    @Test func theStateIsWrittenBeforeTheInhibitorIsReleasedAndANewOneIsTakenAfterTheResume() throws {
        let (env, bus, daemon) = try Self.start()
        defer {
            daemon.stop()
            bus.stop()
        }
        try env.waitUntil("the scheduler to hold a delay inhibitor for sleep") { try Self.holdsOurs(bus) }
        #expect(daemon.log.contains("logind: holding a delay inhibitor for sleep"), "\(daemon.log)")

        // Anyone on the bus can send a signal of that name, to everyone or straight to the
        // scheduler's connection; neither counts, since logind says it is not preparing to sleep.
        let impostor = try bus.busctl(["emit", "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                       "PrepareForSleep", "b", "true"])
        #expect(impostor.status == 0, "\(impostor)")
        let direct = try bus.busctl(["--destination=\(try Self.uniqueName(of: daemon.pid, on: bus))", "emit", "/org/freedesktop/login1",
                                     "org.freedesktop.login1.Manager", "PrepareForSleep", "b", "true"])
        #expect(direct.status == 0, "\(direct)")
        // A round trip through the scheduler's loop, so that both were handled before logind speaks.
        #expect(try env.bgctl("status").status == 0)
        #expect(try Self.holdsOurs(bus), "still held after the impostors")

        try Self.announce(bus, starting: true)
        try env.waitUntil("the inhibitor to be released") { try !Self.holdsOurs(bus) }
        // Read at once: the release came after the write, so the line is already there.
        let written = env.events(.preparingForSleep)
        #expect(written.count == 1, "one announcement, logind's own: \(written)")
        #expect(written.first?.message == "the machine is going to sleep: writing the state; releasing the sleep inhibitor once it is written")
        #expect(daemon.log.contains("logind: state written; released the sleep inhibitor"), "\(daemon.log)")

        try Self.announce(bus, starting: false)
        try env.waitUntil("a new inhibitor after the resume") { try Self.holdsOurs(bus) }
        #expect(env.events(.preparingForSleep).count == 1)
        // The scheduler goes on as before.
        #expect(try env.bgctl("status").status == 0)
    }

    @Test func aLogindThatRestartsGetsANewInhibitorAndOneThatIsGoneLeavesTheSchedulerRunning() throws {
        let (env, bus, daemon) = try Self.start()
        defer {
            daemon.stop()
            bus.stop()
        }
        try env.waitUntil("the first inhibitor") { try Self.holdsOurs(bus) }

        bus.kill("logind")
        try env.waitUntil("the scheduler to note that logind is gone") {
            daemon.log.contains("logind: no sleep inhibitor (")
        }
        try bus.start("logind")
        try env.waitUntil("an inhibitor from the new logind") { try Self.holdsOurs(bus) }
        #expect(try env.bgctl("status").status == 0)
        #expect(processIsAlive(daemon.pid))
    }
}
