import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A system-like D-Bus of the benchmark's own (`dbus-daemon --config-file`, the configuration of
/// the desktop-conditions tests), with python-dbusmock's templates standing in for the desktop's
/// services; `bgtaskd` is pointed at it with `DBUS_SYSTEM_BUS_ADDRESS`.
final class MockSystemBus {
    /// The value for `DBUS_SYSTEM_BUS_ADDRESS`.
    let address: String
    let tools: DesktopTools
    private let folder: String
    private let programs: SpawnedPrograms
    private var daemon: pid_t?
    private var mocks: [String: pid_t] = [:]

    /// The well-known name each template takes.
    static let busNames = [
        "upower": "org.freedesktop.UPower",
        "power_profiles_daemon": "net.hadess.PowerProfiles",
        "logind": "org.freedesktop.login1",
        "networkmanager": "org.freedesktop.NetworkManager",
    ]

    /// Starts the bus in `folder` and waits until it answers.
    init(folder: String, tools: DesktopTools, programs: SpawnedPrograms) throws {
        self.folder = folder
        self.tools = tools
        self.programs = programs
        address = "unix:path=\(folder)/system_bus"
        let config = """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>\(address)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_type="signal"/>
            <allow send_type="method_return"/>
            <allow send_type="error"/>
            <allow receive_type="method_call"/>
            <allow receive_type="signal"/>
            <allow receive_type="method_return"/>
            <allow receive_type="error"/>
          </policy>
        </busconfig>
        """
        let configPath = "\(folder)/system_bus.conf"
        do {
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        } catch {
            throw BenchError("cannot write \(configPath): \(error.localizedDescription)")
        }
        let pid = try programs.start(tools.dbusDaemon, ["--config-file=\(configPath)", "--nofork"],
                                     stdoutPath: "\(folder)/dbus-daemon.out", stderrPath: "\(folder)/dbus-daemon.err")
        daemon = pid
        try waitUntil("the private system bus to answer (\(folder)/dbus-daemon.err)", timeout: 20, interval: 0.01) {
            if self.programs.hasExited(pid) { throw BenchError("dbus-daemon exited at start: \(self.log("dbus-daemon"))") }
            return (try? self.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames"]))?.succeeded == true
        }
    }

    deinit { stop() }

    /// Starts python-dbusmock's `template` with `parameters` and waits until it owns its name.
    func start(_ template: String, parameters: [String: Any] = [:]) throws {
        let json = String(decoding: (try? JSONSerialization.data(withJSONObject: parameters)) ?? Data("{}".utf8), as: UTF8.self)
        let pid = try programs.start(tools.python, ["-m", "dbusmock", "--system", "--template", template, "-p", json],
                                     environment: ["DBUS_SYSTEM_BUS_ADDRESS": address],
                                     stdoutPath: "\(folder)/\(template).out", stderrPath: "\(folder)/\(template).err")
        mocks[template] = pid
        let name = Self.busNames[template] ?? template
        try waitUntil("\(template) to own \(name) (\(folder)/\(template).err)", timeout: 30, interval: 0.01) {
            if self.programs.hasExited(pid) { throw BenchError("python-dbusmock's \(template) exited at start: \(self.log(template))") }
            let answer = try self.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                          "NameHasOwner", "s", name])
            return answer.text == "b true"
        }
    }

    /// A method call that must succeed (the mocks' own `org.freedesktop.DBus.Mock` methods, say).
    func call(_ arguments: [String]) throws {
        let result = try busctl(["call"] + arguments)
        guard result.succeeded else {
            throw BenchError("busctl call \(arguments.joined(separator: " ")) failed: \(result.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
    }

    /// `busctl --address=… ARGUMENTS` on this bus, waited for.
    func busctl(_ arguments: [String]) throws -> Subprocess.Result {
        do {
            return try Subprocess.run(tools.busctl, ["--address=\(address)"] + arguments, scratch: folder)
        } catch let failure as Subprocess.StartFailure {
            throw BenchError(failure.description)
        }
    }

    /// Starts `busctl … Properties.Set` without waiting for it, so that what it causes is timed
    /// while it runs; the caller waits with ``finish(_:)``. dbusmock then sends
    /// `PropertiesChanged`, as the real service would.
    func startSetting(_ change: DesktopChange) throws -> pid_t {
        try programs.start(tools.busctl, ["--address=\(address)", "call", change.busName, change.path,
                                          "org.freedesktop.DBus.Properties", "Set", "ssv", change.interface, change.property,
                                          change.signature, change.value],
                           stdoutPath: "\(folder)/busctl-set.out", stderrPath: "\(folder)/busctl-set.err")
    }

    /// Waits for a ``startSetting(_:)``; throws when the call failed.
    func finish(_ setting: pid_t, _ change: DesktopChange) throws {
        let status = programs.wait(setting)
        guard status == 0 else {
            throw BenchError("cannot set \(change.property) to \(change.value) (busctl exit \(status)): \(log("busctl-set"))")
        }
    }

    /// Ends a ``startSetting(_:)`` that is no longer waited for.
    func abandon(_ setting: pid_t) {
        programs.end(setting)
    }

    /// What a program of the bus wrote on stderr.
    func log(_ name: String) -> String {
        ((try? String(contentsOfFile: "\(folder)/\(name).err", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Ends the mocks, then the bus.
    func stop() {
        for pid in mocks.values { programs.end(pid) }
        mocks = [:]
        if let daemon { programs.end(daemon) }
        daemon = nil
    }
}
