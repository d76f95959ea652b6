import FoundationEssentials
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Finds, in `/proc`, the processes of this user that carry a state directory's launch
/// environment: every process the scheduler starts (and its children) has `BGTASK_STATE_DIR` and
/// `BGTASK_LAUNCH_ID` in the environment it was started with. Run once at start-up, so that a
/// launch whose commit a crash prevented is found even though nothing on disk names it.
enum MarkedProcessScan {
    /// The environment of a process is read up to this many bytes; a launch's variables come from
    /// the scheduler and are far shorter, so a longer environment is not one it gave.
    static let environmentLimit = 1 << 20
    /// The longest launch id taken from an environment (the scheduler's own are under 200 bytes).
    static let launchIDLimit = 256

    static func scan(stateRoot: String) -> [MarkedProcess] {
        let me = getpid()
        let uid = getuid()
        var found: [MarkedProcess] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(name), pid > 1, pid != me else { continue }
            var info = stat()
            guard lstat("/proc/\(name)", &info) == 0, info.st_uid == uid else { continue }
            guard let environment = environment(of: pid),
                  environment["BGTASK_STATE_DIR"].map({ StatePaths(root: $0).root == stateRoot }) == true,
                  let launchID = environment["BGTASK_LAUNCH_ID"], !launchID.isEmpty,
                  launchID.utf8.count <= launchIDLimit,
                  let stat = ProcessLauncher.processStat(of: pid), stat.state != "Z", stat.state != "X" else { continue }
            found.append(MarkedProcess(pid: pid, processStartTicks: stat.startTicks, launchID: launchID,
                                       app: environment["BGTASK_APP_ID"].flatMap { try? Identifier(validating: $0) },
                                       leadsGroup: getpgid(pid) == pid,
                                       startedAt: stat.startTicks.flatMap(ProcessLauncher.startDate(ticks:))))
        }
        return found
    }

    /// The environment the process was started with, or `nil` when it cannot be read (another
    /// user's, a process that made itself undumpable, one that is gone).
    static func environment(of pid: Int32) -> [String: String]? {
        let descriptor = open("/proc/\(pid)/environ", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64 << 10)
        var data: [UInt8] = []
        while data.count < environmentLimit {
            let count = read(descriptor, &bytes, bytes.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            data += bytes[0..<count]
        }
        guard data.count < environmentLimit else { return nil }
        var environment: [String: String] = [:]
        for entry in data.split(separator: 0) {
            guard let equals = entry.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: entry[entry.startIndex..<equals], as: UTF8.self)
            guard key.hasPrefix("BGTASK_") else { continue }
            environment[key] = String(decoding: entry[(equals + 1)...], as: UTF8.self)
        }
        return environment
    }
}
