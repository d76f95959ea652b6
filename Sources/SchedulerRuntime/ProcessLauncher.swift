import CLinuxSupport
import FoundationEssentials
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Starts app processes per the launch contract and reads who a process is from `/proc`.
/// Signals go out through ``ProcessHandles`` only.
struct ProcessLauncher {
    let paths: StatePaths
    let configDirectory: String
    /// Makes each launch's `BGTASK_LAUNCH_TOKEN` and checks the tokens commands carry.
    let launchKey: LaunchKey

    /// A started process.
    struct Launched {
        var pid: Int32
        var startTicks: UInt64?
        /// Where the launch's marker line, and so its output, starts in the app's log.
        var logOffset: Int64?
        /// Why the log could not be opened or its marker written, in one line; `nil` when it was.
        var logProblem: String?
    }

    /// Runs the manifest's executable in its own process group, with the `BGTASK_*` environment,
    /// stdin from /dev/null and output appended to `logs/<app>.log`.
    func launch(_ plan: LaunchPlan) -> Result<Launched, SchedulerError> {
        let manifest = plan.manifest
        var environment = ProcessInfo.processInfo.environment
        environment["BGTASK_STATE_DIR"] = paths.root
        environment["BGTASK_CONFIG_DIR"] = configDirectory
        environment["BGTASK_APP_ID"] = plan.app.rawValue
        environment["BGTASK_LAUNCH_REASON"] = plan.reason
        environment["BGTASK_LAUNCH_ID"] = plan.launchID
        environment["BGTASK_TASK_IDS"] = plan.requests.map(\.identifier.rawValue).joined(separator: " ")
        environment["BGTASK_TASK_KINDS"] = plan.requests.map(\.kind.rawValue).joined(separator: " ")
        // Set only for a launch that delivers a push, never inherited from the scheduler's own.
        environment["BGTASK_PUSH_PAYLOAD"] = plan.pushPayload?.text
        // Set (never inherited from the scheduler's own environment) or, should it not be made, absent.
        environment[LaunchToken.environmentVariable] = try? launchKey.token(app: plan.app, launchID: plan.launchID).text

        let logPath = paths.appLog(plan.app)
        // Never blocks (a FIFO there would hang the scheduler in open(2)); anything but a regular
        // file is not used, and the process inherits the scheduler's own output instead.
        var logProblem: String?
        let log: Int32
        do {
            log = try RegularFile.open(logPath, O_WRONLY | O_APPEND | O_CREAT)
        } catch {
            log = -1
            logProblem = "cannot open logs/\(plan.app).log: \(error)"
        }
        defer { if log >= 0 { close(log) } }
        let logOffset = log >= 0 ? Self.writeMarker(of: plan, to: log) : nil
        if log >= 0 && logOffset == nil {
            logProblem = "cannot write to logs/\(plan.app).log: \(String(cString: strerror(errno)))"
        }

        let pid: pid_t
        switch ProcessSpawn.start(manifest.executable, arguments: manifest.arguments, environment: environment,
                                  stdout: log, stderr: log) {
        case .success(let started): pid = started
        case .failure(let error): return .failure(.launchFailed("cannot start \(manifest.executable): \(error)"))
        }
        return .success(Launched(pid: pid, startTicks: Self.startTicks(of: pid), logOffset: logOffset, logProblem: logProblem))
    }

    /// Appends the launch's marker line to its log and returns the offset it was written at. With
    /// `O_APPEND` the kernel places each write at the end atomically, so the offset after the write
    /// less the marker's length is where it landed, even while an earlier process of the app
    /// writes to the same log. `nil` when the marker could not be written whole.
    static func writeMarker(of plan: LaunchPlan, to log: Int32) -> Int64? {
        let marker = LogMarker(launchID: plan.launchID, kinds: plan.requests.map(\.kind.rawValue),
                               identifiers: plan.requests.map(\.identifier.rawValue), time: Date())
        let bytes = Array(marker.line.utf8)
        let written = bytes.withUnsafeBytes { write(log, $0.baseAddress!, $0.count) }
        guard written == bytes.count else { return nil }
        let end = lseek(log, 0, SEEK_CUR)
        return end >= written ? Int64(end) - Int64(written) : nil
    }

    /// The process's state letter and start time in clock ticks since boot, from `/proc/<pid>/stat`
    /// (fields 3 and 22).
    static func processStat(of pid: Int32) -> (state: Character, startTicks: UInt64?)? {
        ProcessIdentity.stat(of: pid)
    }

    static func startTicks(of pid: Int32) -> UInt64? { processStat(of: pid)?.startTicks }

    /// When the process started, on the wall clock (to the second: the boot time is whole seconds).
    static func startDate(ticks: UInt64) -> Date? {
        guard let stat = FileManager.default.contents(atPath: "/proc/stat"),
              let line = String(decoding: stat, as: UTF8.self).split(separator: "\n").first(where: { $0.hasPrefix("btime ") }),
              let boot = Double(line.dropFirst(6)) else { return nil }
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        guard hertz > 0 else { return nil }
        return Date(timeIntervalSince1970: boot + Double(ticks) / hertz)
    }

    /// Whether the task's process still runs and is the same process (not a reused pid, not a
    /// zombie waiting for a parent that does not reap).
    static func isAlive(_ task: LaunchedTask) -> Bool {
        isAlive(pid: task.pid, startTicks: task.processStartTicks)
    }

    /// Whether `pid` runs and, when `startTicks` is known, is the process that started then.
    static func isAlive(pid: Int32, startTicks: UInt64?) -> Bool {
        ProcessIdentity.isAlive(pid: pid, startTicks: startTicks)
    }
}
