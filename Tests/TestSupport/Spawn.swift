import CLinuxSupport
import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program the way a shell would: a clean signal mask and default handlers (the test
/// runner's threads block nearly every signal, and `Process` would pass that on: a tmux server
/// or a `bgctl events --follow` started that way could not be stopped), stdin from /dev/null,
/// output into files.
public enum Spawn {
    /// Starts `executable`; returns its pid.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String],
                      stdout: String, stderr: String) throws -> pid_t {
        let out = open(stdout, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let err = open(stderr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(out)
            close(err)
        }
        switch ProcessSpawn.start(executable, arguments: arguments, environment: environment, stdout: out, stderr: err) {
        case .success(let pid): return pid
        case .failure(let error): throw TestFailure("cannot start \(executable): \(error)")
        }
    }

    /// Waits for `pid` and returns its exit status (128 + signal when killed).
    public static func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Runs to completion; returns status, stdout and stderr.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> (Int32, String, String) {
        let base = FileManager.default.temporaryDirectory.path + "/bgtop-spawn-\(UUID().uuidString.prefix(8))"
        defer {
            unlink(base + ".out")
            unlink(base + ".err")
        }
        let pid = try start(executable, arguments, environment: environment, stdout: base + ".out", stderr: base + ".err")
        let status = wait(pid)
        let out = (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? ""
        let err = (try? String(contentsOfFile: base + ".err", encoding: .utf8)) ?? ""
        return (status, out, err)
    }
}
