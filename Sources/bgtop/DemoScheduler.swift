import CLinuxSupport
import FoundationEssentials
import Glibc
import TaskState

/// `bgtop --demo`: `bgtaskd --demo` (the scheduler beside this program) started as a child in a
/// process group of its own, so the terminal's keys never signal it; its ``DemoReadiness`` line
/// says where its state is. The dashboard then shows that state like any other, and on exit the
/// scheduler is stopped and its directory removed. The scheduler, its servers and the transfers'
/// libraries live in that process: a `bgtop` built without the default traits links none of them
/// (the default build lists `bgtaskd` as a dependency so that `swift run bgtop --demo` builds it).
final class DemoScheduler {
    let readiness: DemoReadiness
    private let pid: pid_t
    private let pidDescriptor: Int32
    private let refill: DemoTransferRefill
    private var stopped = false

    var stateDirectory: String { readiness.state }
    var configDirectory: String { readiness.config }

    /// How long the scheduler may take to say it is ready (a first start of a debug build on a
    /// busy machine reads a lot of program from disk).
    static let readyTimeoutMilliseconds: Int32 = 60_000

    private init(readiness: DemoReadiness, pid: pid_t, pidDescriptor: Int32) {
        self.readiness = readiness
        self.pid = pid
        self.pidDescriptor = pidDescriptor
        refill = DemoTransferRefill(inbox: Inbox(paths: StatePaths(root: readiness.state)), url: readiness.refillURL)
    }

    deinit { stop() }

    /// `bgtaskd` in the folder of this program.
    static var schedulerExecutable: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path + "/bgtaskd"
    }

    /// Starts `bgtaskd --demo` and waits for its line. Throws the scheduler's own words when it
    /// could not start (it exits having said why).
    static func start(environment: [String: String]) throws(DemoFailure) -> DemoScheduler {
        let executable = schedulerExecutable
        guard access(executable, X_OK) == 0 else {
            throw DemoFailure("no scheduler beside bgtop (\(executable)): bgtop --demo runs bgtaskd --demo; build both (swift build)")
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw DemoFailure("cannot create a pipe: \(String(cString: strerror(errno)))") }
        // Closed on exec: the spawn gives the child its own copy of the write end.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // It checks that its parent is still this process once it has asked to be told of its death.
        var environment = environment
        environment[DemoReadiness.parentVariable] = String(getpid())
        let started = ProcessSpawn.start(executable, arguments: ["--demo"], environment: environment, stdout: ends[1], stderr: ends[1])
        close(ends[1])
        defer { close(ends[0]) }
        let pid: pid_t
        switch started {
        case .failure(let error): throw DemoFailure("cannot start \(executable): \(error)")
        case .success(let started): pid = started
        }
        let pidDescriptor = bg_pidfd_open(pid)
        let said = readReadiness(from: ends[0])
        if let readiness = said.readiness {
            return DemoScheduler(readiness: readiness, pid: pid, pidDescriptor: pidDescriptor)
        }
        // It said something else, or nothing in time: whatever it is, it is not running the demo.
        if pidDescriptor >= 0 { _ = bg_pidfd_send_signal(pidDescriptor, SIGKILL) } else { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if pidDescriptor >= 0 { close(pidDescriptor) }
        let words = said.text.trimmedWhitespace()
        throw DemoFailure(words.isEmpty ? (said.timedOut ? "\(executable) --demo said nothing within a minute" : "\(executable) --demo exited")
                                        : words.replacingLiterally("\n", with: "; "))
    }

    /// Reads until a line that decodes as ``DemoReadiness``, the end of the pipe, 16 KiB, or the timeout.
    private static func readReadiness(from descriptor: Int32) -> (readiness: DemoReadiness?, text: String, timedOut: Bool) {
        var received: [UInt8] = []
        var poll = KernelPoll<Int>()
        poll.watch(0, descriptor)
        let deadline = bg_monotonic_seconds() + Double(readyTimeoutMilliseconds) / 1000
        var buffer = [UInt8](repeating: 0, count: 4096)
        while received.count < 16_384 {
            let left = deadline - bg_monotonic_seconds()
            guard left > 0, let ready = poll.wait(milliseconds: Int32(left * 1000)), !ready.isEmpty else {
                return (nil, String(decoding: received, as: UTF8.self), true)
            }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            received += buffer[0..<count]
            let text = String(decoding: received, as: UTF8.self)
            if let readiness = text.split(separator: "\n").lazy.compactMap({ DemoReadiness.parse($0) }).first {
                return (readiness, text, false)
            }
        }
        return (nil, String(decoding: received, as: UTF8.self), false)
    }

    /// The dashboard has read new state: a download that completed is followed by a new one.
    func stateWasRead(transfers: [TransferRecord]) {
        guard !stopped else { return }
        refill.follow(transfers)
    }

    /// Stops the scheduler (SIGTERM; it ends the demo apps and removes its directory), with
    /// SIGKILL after five seconds; then ends what a killed scheduler left and removes the
    /// directory if it is still there. Idempotent.
    func stop() {
        guard !stopped else { return }
        stopped = true
        // Not yet reaped, so the pid is still this child's, pidfd or not.
        if pidDescriptor >= 0 { _ = bg_pidfd_send_signal(pidDescriptor, SIGTERM) } else { kill(pid, SIGTERM) }
        var status: Int32 = 0
        var exited = false
        var reaped = false
        if pidDescriptor >= 0 {
            var poll = KernelPoll<Int>()
            poll.watch(0, pidDescriptor)
            exited = !(poll.wait(milliseconds: 5000)?.isEmpty ?? true)
        } else {
            // No pidfd to wait on: look every 10 ms for five seconds.
            for _ in 0..<500 where !exited {
                exited = waitpid(pid, &status, WNOHANG) == pid
                if !exited { usleep(10_000) }
            }
            reaped = exited
        }
        if !exited {
            if pidDescriptor >= 0 { _ = bg_pidfd_send_signal(pidDescriptor, SIGKILL) } else { kill(pid, SIGKILL) }
        }
        if !reaped { while waitpid(pid, &status, 0) < 0 && errno == EINTR {} }
        if pidDescriptor >= 0 { close(pidDescriptor) }
        // A scheduler that was killed cannot have ended its apps or removed the directory (whose
        // path was checked when read): only a directory of this user's, not a link to one.
        var info = stat()
        guard lstat(readiness.root, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == getuid() else { return }
        LaunchedProcessEnding.killAll(recordedIn: StatePaths(root: readiness.state))
        try? FileManager.default.removeItem(atPath: readiness.root)
    }

}

/// Why the demo did not start, in one line.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
