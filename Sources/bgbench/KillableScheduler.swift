import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The `bgtaskd` of a ``SchedulerSession`` that the campaign kills with SIGKILL (no chance to
/// commit, flush or clean up: a power cut as far as the daemon can tell) and starts again on
/// the same state and config, as a user's service manager would.
///
/// The session writes the config and starts the first process; every later one is started here
/// with the same arguments, its stderr appended to `bgtaskd-restarts.log` in the session folder.
final class KillableScheduler {
    let session: SchedulerSession
    private let scheduler: String
    private let restartLog: String
    /// The process started after the latest kill; `nil` while the session's own still runs.
    private var restarted: Process?
    /// The pid of the current (or last) daemon.
    private(set) var pid: Int32
    /// Killed (or found dead) and not started again yet.
    private(set) var isDown = false
    /// How often it was killed on purpose, and started again.
    private(set) var kills = 0
    private(set) var restarts = 0
    /// Exits nobody asked for, each as one line (status and when).
    private(set) var unexpectedExits: [String] = []

    init(session: SchedulerSession, scheduler: String) throws {
        guard let pid = StateLock.holder(session.paths) else {
            throw BenchError("bgtaskd holds no lock (log: \(session.log))")
        }
        self.session = session
        self.scheduler = scheduler
        self.pid = pid
        restartLog = "\(session.folder)/bgtaskd-restarts.log"
        _ = FileManager.default.createFile(atPath: restartLog, contents: nil)
    }

    /// Whether the current daemon process is alive.
    var isRunning: Bool { restarted?.isRunning ?? session.isRunning }

    /// Notices a daemon that died on its own: records the exit and marks it down, so the caller
    /// starts it again. Returns whether it had.
    func noticeUnexpectedExit() -> Bool {
        guard !isDown, !isRunning else { return false }
        let status = restarted.map { "status \($0.terminationStatus)" } ?? "see \(session.folder)/bgtaskd.log"
        unexpectedExits.append("pid \(pid) exited by itself (\(status)) at \(JSONFormat.string(from: Date()))")
        Interruption.stopped(scheduler: pid)
        isDown = true
        return true
    }

    /// SIGKILL, then waits until the kernel has released its lock (the process is gone).
    func killHard() throws {
        guard !isDown else { return }
        kill(pid, SIGKILL)
        try waitUntil("bgtaskd (pid \(pid)) to die after SIGKILL", timeout: 10, interval: 0.005) {
            !self.isRunning && StateLock.holder(self.session.paths) != self.pid
        }
        Interruption.stopped(scheduler: pid)
        kills += 1
        isDown = true
    }

    /// Starts a new daemon on the same state and config and waits until it holds the lock.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: scheduler)
        process.arguments = ["--state", session.paths.root, "--config", session.config, "--log-level", "warning"]
        var environment = ProcessInfo.processInfo.environment
        for key in ["BGTASK_STATE_DIR", "BGTASK_CONFIG_DIR", "BGTASK_APP_ID"] { environment[key] = nil }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let log = FileHandle(forWritingAtPath: restartLog)
        _ = try? log?.seekToEnd()
        process.standardOutput = log
        process.standardError = log
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(scheduler) again: \(error)")
        }
        try? log?.close()
        restarted = process
        pid = process.processIdentifier
        Interruption.started(scheduler: pid)
        isDown = false
        restarts += 1
        try waitUntil("bgtaskd to start again (log: \(restartLog))", timeout: 30, interval: 0.005) {
            guard process.isRunning else {
                throw BenchError("bgtaskd exited while starting again, status \(process.terminationStatus) (log: \(self.restartLog))")
            }
            return StateLock.holder(self.session.paths) == process.processIdentifier
        }
    }

    /// SIGTERM to a restarted daemon and wait; then the session stops (its own process, and any
    /// task process groups left).
    func stop() {
        if let restarted, restarted.isRunning {
            kill(restarted.processIdentifier, SIGTERM)
            // A daemon that ignores SIGTERM must not keep the benchmark (or its folder) alive.
            for _ in 0..<500 where restarted.isRunning { usleep(20_000) }
            if restarted.isRunning { kill(restarted.processIdentifier, SIGKILL) }
            restarted.waitUntilExit()
        }
        if let restarted { Interruption.stopped(scheduler: restarted.processIdentifier) }
        session.stop()
    }
}
