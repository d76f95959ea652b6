import Foundation
import Synchronization
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The helper programs a benchmark started (a bus, its mocks, a monitor), started with a clean
/// signal mask and default handlers (``ProcessSpawn``), and ended with SIGKILL: they keep no state
/// worth a clean exit. On Ctrl-C, ``endAll()`` runs from ``Interruption``.
final class SpawnedPrograms: Sendable {
    private let running = Mutex<Set<pid_t>>([])

    /// Starts `executable` with `environment` added to bgbench's own, output to the descriptors.
    func start(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:],
               stdout: Int32, stderr: Int32) throws -> pid_t {
        var environment = ProcessInfo.processInfo.environment
        for key in ["BGTASK_STATE_DIR", "BGTASK_CONFIG_DIR", "BGTASK_APP_ID"] { environment[key] = nil }
        for (key, value) in extra { environment[key] = value }
        switch ProcessSpawn.start(executable, arguments: arguments, environment: environment, stdout: stdout, stderr: stderr) {
        case .success(let pid):
            running.withLock { _ = $0.insert(pid) }
            return pid
        case .failure(let error):
            throw BenchError("cannot start \(executable): \(error)")
        }
    }

    /// Starts `executable` with stdout and stderr into files (created or truncated).
    func start(_ executable: String, _ arguments: [String], environment extra: [String: String] = [:],
               stdoutPath: String, stderrPath: String) throws -> pid_t {
        let out = open(stdoutPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let err = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            if out >= 0 { close(out) }
            if err >= 0 { close(err) }
        }
        guard out >= 0, err >= 0 else { throw BenchError("cannot create \(stdoutPath): \(String(cString: strerror(errno)))") }
        return try start(executable, arguments, environment: extra, stdout: out, stderr: err)
    }

    /// Waits for a program that ends by itself; its exit status (128 + signal when killed).
    func wait(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        running.withLock { _ = $0.remove(pid) }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }

    /// Whether `pid` has exited (reaping it if so).
    func hasExited(_ pid: pid_t) -> Bool {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return false }
        running.withLock { _ = $0.remove(pid) }
        return true
    }

    /// SIGKILL and reap.
    func end(_ pid: pid_t) {
        guard running.withLock({ $0.contains(pid) }) else { return }
        kill(pid, SIGKILL)
        _ = wait(pid)
    }

    /// Ends every program still running.
    func endAll() {
        for pid in running.withLock({ Array($0) }) { end(pid) }
    }
}
