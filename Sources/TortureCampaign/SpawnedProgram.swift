import CLinuxSupport
import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A program started with a clean signal mask and default handlers in its own process group
/// (`bg_spawn`), stdin from /dev/null and its output in a file: a test runner's threads block
/// nearly every signal, and a child started with `Process` would inherit that.
final class SpawnedProgram {
    let pid: pid_t
    private(set) var exit: Int32?

    /// The raw `waitpid` status once the program has ended.
    private(set) var rawStatus: Int32 = 0

    init(_ executable: String, _ arguments: [String], environment: [String: String], output: String) throws(TortureError) {
        let fd = open(output, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw TortureError("cannot open \(output): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        switch ProcessSpawn.start(executable, arguments: arguments, environment: environment, stdout: fd, stderr: fd) {
        case .success(let pid): self.pid = pid
        case .failure(let error): throw TortureError("cannot start \(executable): \(error)")
        }
    }

    /// Reaps the program if it has ended; returns whether it has.
    func poll() -> Bool {
        if exit != nil { return true }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        guard rc == pid else { return false }
        rawStatus = status
        let signal = status & 0x7f
        exit = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return true
    }

    /// The signal that ended it, if one did.
    var signal: Int32? {
        guard exit != nil else { return nil }
        let number = rawStatus & 0x7f
        return number == 0 ? nil : number
    }

    /// Waits up to `timeout` seconds for it to end; returns whether it did.
    func wait(timeout: TimeInterval) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !poll() {
            if Date() >= deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// SIGKILL and reap.
    func killAndReap() {
        guard !poll() else { return }
        kill(pid, SIGKILL)
        _ = wait(timeout: 30)
    }
}
