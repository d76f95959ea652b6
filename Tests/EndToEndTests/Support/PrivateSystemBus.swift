import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A system-like D-Bus of the test's own (`dbus-daemon --config-file`), with python-dbusmock's
/// templates standing in for the desktop's services; `bgtaskd` is pointed at it with
/// `DBUS_SYSTEM_BUS_ADDRESS`. Every process it starts ends with ``stop()`` (or its deinit).
final class PrivateSystemBus {
    /// The value for `DBUS_SYSTEM_BUS_ADDRESS`.
    let address: String
    private let environment: TestEnvironment
    private var daemonPID: pid_t?
    /// The running mock of each template, by template name.
    private var services: [String: pid_t] = [:]

    /// The well-known name each template takes.
    static let busNames = [
        "upower": "org.freedesktop.UPower",
        "power_profiles_daemon": "net.hadess.PowerProfiles",
        "logind": "org.freedesktop.login1",
        "networkmanager": "org.freedesktop.NetworkManager",
    ]

    /// Starts the bus and waits until it accepts connections.
    init(_ environment: TestEnvironment) throws {
        self.environment = environment
        let socket = "\(environment.root)/system_bus"
        address = "unix:path=\(socket)"
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
        let configPath = "\(environment.root)/system_bus.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
        daemonPID = try Spawn.start("/usr/bin/dbus-daemon", ["--config-file=\(configPath)", "--nofork"],
                                    environment: BoundedProcess.environment,
                                    stdout: "\(environment.root)/dbus-daemon.out", stderr: "\(environment.root)/dbus-daemon.err")
        try environment.waitUntil("the private system bus to answer") {
            (try? self.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "ListNames"]))?.status == 0
        }
    }

    deinit { stop() }

    /// Starts python-dbusmock's `template` with `parameters` and waits until it owns its name.
    func start(_ template: String, parameters: [String: Any] = [:]) throws {
        let json = String(decoding: try JSONSerialization.data(withJSONObject: parameters), as: UTF8.self)
        var variables = BoundedProcess.environment
        variables["DBUS_SYSTEM_BUS_ADDRESS"] = address
        services[template] = try Spawn.start("/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", template, "-p", json],
                                             environment: variables,
                                             stdout: "\(environment.root)/\(template).out", stderr: "\(environment.root)/\(template).err")
        let name = Self.busNames[template] ?? template
        try environment.waitUntil("\(template) to own \(name) (its log: \(mockLog(template)))") {
            let answer = try self.busctl(["call", "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                          "NameHasOwner", "s", name])
            return answer.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "b true"
        }
    }

    /// Kills the mock of `template` (SIGKILL, as a crash) and reaps it.
    func kill(_ template: String) {
        guard let pid = services.removeValue(forKey: template) else { return }
        BoundedProcess.end(pid)
    }

    /// Sets a property through `org.freedesktop.DBus.Properties.Set`; dbusmock then sends
    /// `PropertiesChanged`, as the real service would.
    func set(_ name: String, _ path: String, _ interface: String, _ property: String, _ signature: String, _ value: String) throws {
        let result = try busctl(["call", name, path, "org.freedesktop.DBus.Properties", "Set", "ssv", interface, property, signature, value])
        guard result.status == 0 else { throw TestFailure("cannot set \(property): \(result)") }
    }

    /// `busctl --address=… ARGUMENTS` on this bus.
    @discardableResult
    func busctl(_ arguments: [String]) throws -> TestEnvironment.Result {
        try BoundedProcess.run(["/usr/bin/busctl", "--address=\(address)"] + arguments)
    }

    /// What a mock wrote to stderr (its traceback, when it failed to start).
    func mockLog(_ template: String) -> String {
        (try? String(contentsOfFile: "\(environment.root)/\(template).err", encoding: .utf8)) ?? ""
    }

    /// Ends the mocks, then the bus.
    func stop() {
        for template in Array(services.keys) { kill(template) }
        if let daemonPID { BoundedProcess.end(daemonPID) }
        daemonPID = nil
    }
}
