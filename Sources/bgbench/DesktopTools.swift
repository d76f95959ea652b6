import Foundation

/// The programs `bgbench conditions` runs beside `bgtaskd`: a private `dbus-daemon`, `busctl` to
/// change the mocks' properties, `dbus-monitor` (the peer), and python-dbusmock's templates run
/// by Debian's `/usr/bin/python3`, as the desktop-conditions tests run them.
struct DesktopTools: Sendable {
    var dbusDaemon: String
    var dbusMonitor: String
    var busctl: String
    var python: String

    /// The interpreter whose `dbusmock` module is used (the distribution's, where python3-dbusmock installs it).
    static let pythonPath = "/usr/bin/python3"

    /// Finds every program, or throws one line naming the first that is missing and its Debian package.
    static func locate(scratch: String) throws -> DesktopTools {
        let dbusDaemon = try find("dbus-daemon", package: "dbus-daemon")
        let dbusMonitor = try find("dbus-monitor", package: "dbus-bin")
        let busctl = try find("busctl", package: "systemd")
        guard FileManager.default.isExecutableFile(atPath: pythonPath) else {
            throw BenchError("bgbench conditions needs \(pythonPath) with python-dbusmock (Debian: python3-dbusmock); \(pythonPath) is missing")
        }
        let probe = try? Subprocess.run(pythonPath, ["-c", "import dbusmock"], scratch: scratch)
        guard probe?.succeeded == true else {
            throw BenchError("bgbench conditions needs python-dbusmock for \(pythonPath) (Debian: python3-dbusmock); `import dbusmock` failed")
        }
        return DesktopTools(dbusDaemon: dbusDaemon, dbusMonitor: dbusMonitor, busctl: busctl, python: pythonPath)
    }

    /// `name`'s full path, from the first folder on `PATH` that has it.
    private static func find(_ name: String, package: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":").map(String.init) where !folder.isEmpty {
            let candidate = "\(folder)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw BenchError("bgbench conditions needs \(name) (Debian: \(package)); it is not on PATH")
    }
}
