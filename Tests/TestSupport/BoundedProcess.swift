import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real programs, run with a time limit: a hang ends as a test failure with the process
/// killed, never as a stuck suite, and no process outlives its test.
public enum BoundedProcess {
    /// `setpriv` as `nobody` when the tests run as root, so that permissions mean what they mean
    /// to a user (root reads a mode-000 file; `nobody` cannot); empty otherwise.
    public static let unprivilegedPrefix: [String] = getuid() == 0
        ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : []

    /// Gives every file under `root` (links themselves, not their targets) to the user of
    /// ``unprivilegedPrefix``; nothing to do when the tests do not run as root.
    public static func handOver(_ root: String) {
        guard getuid() == 0 else { return }
        _ = lchown(root, 65534, 65534)
        guard let walker = FileManager.default.enumerator(atPath: root) else { return }
        while let relative = walker.nextObject() as? String {
            _ = lchown("\(root)/\(relative)", 65534, 65534)
        }
    }

    /// The environment the programs get: the test runner's, without the `BGTASK_*` locations.
    public static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for key in ["BGTASK_STATE_DIR", "BGTASK_CONFIG_DIR", "BGTASK_APP_ID"] { environment[key] = nil }
        return environment
    }

    /// Starts `command` (program and arguments) with output into files.
    public static func start(_ command: [String], stdout: String, stderr: String) throws -> pid_t {
        try Spawn.start(command[0], Array(command.dropFirst()), environment: environment, stdout: stdout, stderr: stderr)
    }

    /// Waits up to `timeout` seconds for `pid`; its exit status (128 + signal when killed), or
    /// `nil` when it is still running.
    public static func wait(_ pid: pid_t, timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                let signal = status & 0x7f
                return signal == 0 ? (status >> 8) & 0xff : 128 + signal
            }
            if done < 0 && errno != EINTR { return -1 }
            if Date() >= deadline { return nil }
            usleep(10_000)
        }
    }

    /// SIGKILL and reap.
    @discardableResult
    public static func end(_ pid: pid_t) -> Int32 {
        kill(pid, SIGKILL)
        return Spawn.wait(pid)
    }

    /// Runs `command` to completion within `timeout` seconds; a hang is killed and thrown.
    public static func run(_ command: [String], timeout: TimeInterval = 20) throws -> TestEnvironment.Result {
        let base = FileManager.default.temporaryDirectory.path + "/bgtop-bounded-\(UUID().uuidString.prefix(8))"
        defer {
            unlink(base + ".out")
            unlink(base + ".err")
        }
        let pid = try start(command, stdout: base + ".out", stderr: base + ".err")
        let status = wait(pid, timeout: timeout)
        if status == nil { end(pid) }
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        guard let status else {
            throw TestFailure("hang: \(command.joined(separator: " ")) did not finish within \(timeout) s (killed)\nstdout: \(out)\nstderr: \(err)")
        }
        return TestEnvironment.Result(status: status, stdout: out, stderr: err)
    }
}
