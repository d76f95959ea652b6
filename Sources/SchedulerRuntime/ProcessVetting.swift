import CLinuxSupport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A process the scheduler has checked and may signal: a pidfd on it, opened before the checks,
/// so whatever is later signalled through it is the process that passed them, even once its pid
/// is reused.
struct VettedProcess {
    var pid: Int32
    /// Owned by whoever takes the vetted process (``ProcessHandles``); closed there.
    var pidfd: Int32
    var startTicks: UInt64?
}

/// Why a pid named by an `attach` or `begin-finishing` command is not one the scheduler will signal.
enum ProcessRefusal: Error, Equatable, CustomStringConvertible {
    case scheduler(Int32)
    case initProcess
    case notRunning(Int32)
    case otherUser(pid: Int32, uid: UInt32, ours: UInt32)
    case notTheAppsExecutable(pid: Int32, executable: String?, expected: String)

    var description: String {
        switch self {
        case .scheduler(let pid):
            return "pid \(pid) is bgtaskd itself; the scheduler never signals itself"
        case .initProcess:
            return "pid 1 is the init process; the scheduler never signals it"
        case .notRunning(let pid):
            return "pid \(pid) is not a running process"
        case .otherUser(let pid, let uid, let ours):
            return "pid \(pid) belongs to uid \(uid), not to the scheduler's uid \(ours)"
        case .notTheAppsExecutable(let pid, let executable, let expected):
            let what = executable.map { "runs \($0)" } ?? "has an executable the scheduler cannot read"
            return "pid \(pid) \(what), not the app's executable \(expected), and was not launched by the scheduler"
        }
    }
}

/// The rule for which processes the scheduler signals: never itself, never pid 1, never a process
/// of another uid; otherwise one it launched, or one whose `/proc/PID/exe` is the app's manifest
/// executable. Any other pid (a shell, an editor, a `sleep` of the same user) is refused, so a
/// command naming it cannot turn the scheduler's expiry signal and kill against it.
enum ProcessVetting {
    /// Checks `pid` and, when it passes, returns it with a pidfd on it.
    ///
    /// `launchedByScheduler` says the pid is a process this scheduler started (its own child, or
    /// a task's process recorded with this start time): the executable need not match, since a
    /// manifest's executable may be a script whose process runs an interpreter.
    static func vet(pid: Int32, appExecutable: String,
                    launchedByScheduler: (_ pid: Int32, _ startTicks: UInt64?) -> Bool) -> Result<VettedProcess, ProcessRefusal> {
        if pid == getpid() { return .failure(.scheduler(pid)) }
        if pid == 1 { return .failure(.initProcess) }
        guard pid > 1 else { return .failure(.notRunning(pid)) }
        // The pidfd first: every check below then reads the process it refers to, as long as that
        // process still runs when they are done (checked last).
        let pidfd = bg_pidfd_open(pid)
        guard pidfd >= 0 else { return .failure(.notRunning(pid)) }
        let verdict = check(pid: pid, appExecutable: appExecutable, launchedByScheduler: launchedByScheduler)
        guard case .success(let startTicks) = verdict, bg_pidfd_is_running(pidfd) != 0 else {
            close(pidfd)
            if case .failure(let refusal) = verdict { return .failure(refusal) }
            return .failure(.notRunning(pid))
        }
        return .success(VettedProcess(pid: pid, pidfd: pidfd, startTicks: startTicks))
    }

    private static func check(pid: Int32, appExecutable: String,
                              launchedByScheduler: (Int32, UInt64?) -> Bool) -> Result<UInt64?, ProcessRefusal> {
        guard let stat = ProcessLauncher.processStat(of: pid), stat.state != "Z", stat.state != "X" else {
            return .failure(.notRunning(pid))
        }
        let ours = geteuid()
        guard let uids = userIDs(of: pid) else { return .failure(.notRunning(pid)) }
        if let other = uids.first(where: { $0 != ours }) {
            return .failure(.otherUser(pid: pid, uid: other, ours: ours))
        }
        if launchedByScheduler(pid, stat.startTicks) { return .success(stat.startTicks) }
        let executable = executable(of: pid)
        let expected = resolved(appExecutable)
        // Byte for byte: String's == takes two spellings of "é" (two different files) for one.
        guard let executable, executable.utf8.elementsEqual(expected.utf8) else {
            return .failure(.notTheAppsExecutable(pid: pid, executable: executable, expected: appExecutable))
        }
        return .success(stat.startTicks)
    }

    /// The real, effective, saved and file-system uids, from the `Uid:` line of `/proc/PID/status`.
    static func userIDs(of pid: Int32) -> [UInt32]? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/status") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") }) else { return nil }
        let ids = line.dropFirst(4).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { UInt32($0) }
        return ids.isEmpty ? nil : ids
    }

    /// The target of `/proc/PID/exe`: the file the process runs (with ` (deleted)` when it was
    /// replaced since, which then matches no manifest).
    static func executable(of pid: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The manifest's path with symlinks resolved, as the kernel reports `/proc/PID/exe`.
    private static func resolved(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }
}
