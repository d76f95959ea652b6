import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The campaign's `bgtaskd`: started on the campaign's state and config, killed with SIGKILL
/// (no chance to commit, flush or clean up: a power cut as far as it can tell) and started again,
/// as a user's service manager would. An exit nobody caused is kept as a crash.
final class TortureDaemon {
    private let executable: String
    private let paths: StatePaths
    private let config: String
    private let log: String
    private var process: SpawnedProgram?
    /// Exits nobody caused, one line each.
    private(set) var crashes: [String] = []
    private(set) var kills = 0
    private(set) var starts = 0

    init(executable: String, paths: StatePaths, config: String, log: String) {
        self.executable = executable
        self.paths = paths
        self.config = config
        self.log = log
    }

    /// Whether a daemon process of ours runs now.
    var isUp: Bool { process.map { !$0.poll() } ?? false }

    /// Starts `bgtaskd` and waits (up to `timeout`) until it holds the lock. Returns `false` when
    /// it did not within the bound: a hang, and the process is killed.
    func start(timeout: TimeInterval) throws(TortureError) -> Bool {
        var environment = ProcessInfo.processInfo.environment
        for key in ["BGTASK_STATE_DIR", "BGTASK_CONFIG_DIR", "BGTASK_APP_ID"] { environment[key] = nil }
        let started = try SpawnedProgram(executable, ["--state", paths.root, "--config", config, "--log-level", "warning"],
                                         environment: environment, output: log)
        process = started
        starts += 1
        let deadline = Date().addingTimeInterval(timeout)
        while StateLock.holder(paths) != started.pid {
            if started.poll() {
                noteExit(of: started, while: "starting")
                process = nil
                return true
            }
            if Date() >= deadline {
                started.killAndReap()
                process = nil
                return false
            }
            usleep(2_000)
        }
        return true
    }

    /// Notices a daemon that ended on its own, keeping it as a crash. Returns whether it had.
    func noticeUnexpectedExit() -> Bool {
        guard let process, process.poll() else { return false }
        noteExit(of: process, while: "running")
        self.process = nil
        return true
    }

    /// SIGKILL, and waits until it is reaped.
    func killHard() {
        guard let process else { return }
        if process.poll() {
            noteExit(of: process, while: "running")
        } else {
            kill(process.pid, SIGKILL)
            _ = process.wait(timeout: 30)
            kills += 1
        }
        self.process = nil
    }

    /// SIGTERM, then SIGKILL if it does not stop in `timeout`.
    func stop(timeout: TimeInterval = 20) {
        guard let process else { return }
        if !process.poll() {
            kill(process.pid, SIGTERM)
            if !process.wait(timeout: timeout) {
                crashes.append("pid \(process.pid) did not stop within \(Int(timeout)) s of SIGTERM")
                process.killAndReap()
            } else if let code = process.exit, code != 0 {
                crashes.append("pid \(process.pid) exited \(code) on SIGTERM (log: \(log))")
            }
        } else {
            noteExit(of: process, while: "running")
        }
        self.process = nil
    }

    private func noteExit(of process: SpawnedProgram, while doing: String) {
        let how = process.signal.map { "killed by signal \($0)" } ?? "exited with status \(process.exit ?? -1)"
        crashes.append("bgtaskd pid \(process.pid) \(how) while \(doing), at \(JSONFormat.string(from: Date())) (log: \(log))")
    }
}
