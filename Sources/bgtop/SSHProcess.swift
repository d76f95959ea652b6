import CLinuxSupport
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// One running ssh: its pid, a pidfd that becomes readable when it exits, and pipes to its
/// stdin, stdout and stderr. Started in a session of its own (no terminal to read a password
/// from, no SIGINT from the dashboard's terminal); ``end()`` stops and reaps it.
final class SSHProcess {
    let pid: pid_t
    let pidDescriptor: Int32
    /// Request lines go here (non-blocking).
    private(set) var input: Int32
    /// The feed comes from here.
    private(set) var output: Int32
    /// ssh's complaints (`Permission denied`, `Connection refused`).
    private(set) var errors: Int32
    private var reaped = false

    init(_ launch: SSHLaunch, environment: [String: String]) throws(StateError) {
        var stdinPipe: [Int32] = [-1, -1], stdoutPipe: [Int32] = [-1, -1], stderrPipe: [Int32] = [-1, -1]
        guard Self.makePipe(&stdinPipe) == 0 else { throw .system(operation: "cannot create a pipe for", path: "ssh", errno: errno) }
        guard Self.makePipe(&stdoutPipe) == 0 else {
            let code = errno
            stdinPipe.forEach { Glibc.close($0) }
            throw .system(operation: "cannot create a pipe for", path: "ssh", errno: code)
        }
        guard Self.makePipe(&stderrPipe) == 0 else {
            let code = errno
            (stdinPipe + stdoutPipe).forEach { Glibc.close($0) }
            throw .system(operation: "cannot create a pipe for", path: "ssh", errno: code)
        }
        let started = ProcessSpawn.startInSession(launch.executable, arguments: launch.arguments, environment: environment,
                                                  stdin: stdinPipe[0], stdout: stdoutPipe[1], stderr: stderrPipe[1])
        // The child's ends are the child's.
        [stdinPipe[0], stdoutPipe[1], stderrPipe[1]].forEach { Glibc.close($0) }
        switch started {
        case .failure(let error):
            [stdinPipe[1], stdoutPipe[0], stderrPipe[0]].forEach { Glibc.close($0) }
            throw .system(operation: "cannot start", path: launch.executable, errno: error.code)
        case .success(let pid):
            self.pid = pid
        }
        input = stdinPipe[1]
        output = stdoutPipe[0]
        errors = stderrPipe[0]
        _ = fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK)
        pidDescriptor = bg_pidfd_open(pid)
    }

    deinit { end() }

    /// A pipe whose ends are closed on exec (the spawn gives the child its own copies).
    private static func makePipe(_ ends: inout [Int32]) -> Int32 {
        guard pipe(&ends) == 0 else { return -1 }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        return 0
    }

    /// Whether ssh has exited (its pidfd is readable).
    var hasExited: Bool { pidDescriptor < 0 || bg_pidfd_is_running(pidDescriptor) == 0 }

    /// Stops ssh (SIGTERM, a second's grace, SIGKILL), reaps it and closes the pipes; returns its
    /// exit status (128 + signal when killed), or nil when it was already reaped.
    @discardableResult
    func end() -> Int32? {
        guard !reaped else { return nil }
        reaped = true
        for descriptor in [input, output, errors] where descriptor >= 0 { Glibc.close(descriptor) }
        input = -1
        output = -1
        errors = -1
        if pidDescriptor >= 0, bg_pidfd_is_running(pidDescriptor) != 0 {
            _ = bg_pidfd_send_signal(pidDescriptor, SIGTERM)
            var poll = KernelPoll<Int>()
            poll.watch(0, pidDescriptor)
            if poll.wait(milliseconds: 1000)?.isEmpty ?? true { _ = bg_pidfd_send_signal(pidDescriptor, SIGKILL) }
        } else if pidDescriptor < 0 {
            // No pidfd to wait on with a limit: end it outright rather than risk waiting forever.
            kill(pid, SIGKILL)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if pidDescriptor >= 0 { Glibc.close(pidDescriptor) }
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : 128 + signal
    }
}
