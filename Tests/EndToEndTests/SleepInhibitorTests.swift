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

    /// logind (the owner of its name) announces a sleep (`true`) or the resume (`false`).
    static func announce(_ bus: PrivateSystemBus, starting: Bool) throws {
        let sent = try bus.busctl(["call", login, "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "EmitSignal",
                                   "sssav", "org.freedesktop.login1.Manager", "PrepareForSleep", "b", "1", "b", "\(starting)"])
        guard sent.status == 0 else { throw TestFailure("cannot emit PrepareForSleep: \(sent)") }
    }

    @Test func theStateIsWrittenBeforeTheInhibitorIsReleasedAndANewOneIsTakenAfterTheResume() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("logind")
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
        try env.waitUntil("the scheduler to hold a delay inhibitor for sleep") { try Self.holdsOurs(bus) }
        #expect(daemon.log.contains("logind: holding a delay inhibitor for sleep"), "\(daemon.log)")

        // Anyone on the bus can send a signal of that name; only logind's counts.
        let impostor = try bus.busctl(["emit", "/org/freedesktop/login1", "org.freedesktop.login1.Manager",
                                       "PrepareForSleep", "b", "true"])
        #expect(impostor.status == 0, "\(impostor)")

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
        let env = try TestEnvironment()
        try env.writeSettings(["conditionsRecheckSeconds": 3600])
        let bus = try PrivateSystemBus(env)
        defer { bus.stop() }
        try bus.start("logind")
        let daemon = try env.startDaemon(environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { daemon.stop() }
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
