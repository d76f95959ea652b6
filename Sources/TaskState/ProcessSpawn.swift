import CLinuxSupport
#if canImport(Glibc)
import Glibc
#endif

/// Starts a program the way the scheduler starts apps (`bg_spawn`): in a process group of its own,
/// with an empty signal mask and default handlers (a thread that blocks signals would otherwise
/// pass that on), stdin from /dev/null, stdout and stderr on the given descriptors, and no other
/// descriptor. The one place that turns Swift strings into `argv` and `envp` for it.
public enum ProcessSpawn {
    /// The new process's pid, or the `errno` that kept it from starting.
    public static func start(_ executable: String, arguments: [String], environment: [String: String],
                             stdout: Int32, stderr: Int32) -> Result<pid_t, Errno> {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        // Sorted, so that a program sees the same environment order at every start.
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { a in
            envp.withUnsafeBufferPointer { e in bg_spawn(&pid, executable, a.baseAddress!, e.baseAddress!, stdout, stderr) }
        }
        return rc == 0 ? .success(pid) : .failure(Errno(code: rc))
    }

    /// Starts a program in a session of its own (``bg_spawn_session``: no controlling terminal),
    /// with all three standard descriptors given: how `bgtop --host` runs `ssh`.
    public static func startInSession(_ executable: String, arguments: [String], environment: [String: String],
                                      stdin: Int32, stdout: Int32, stderr: Int32) -> Result<pid_t, Errno> {
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let rc = argv.withUnsafeBufferPointer { a in
            envp.withUnsafeBufferPointer { e in
                bg_spawn_session(&pid, executable, a.baseAddress!, e.baseAddress!, stdin, stdout, stderr)
            }
        }
        return rc == 0 ? .success(pid) : .failure(Errno(code: rc))
    }

    /// An `errno` value, with its text.
    public struct Errno: Error, Equatable, CustomStringConvertible {
        public var code: Int32
        public var description: String { String(cString: strerror(code)) }
    }
}
