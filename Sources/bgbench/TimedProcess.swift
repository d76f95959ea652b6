import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program with a deadline and kills it (SIGKILL) when the deadline passes: the peers of
/// `transfer-faults` may hang on a server that misbehaves, and a campaign must end.
///
/// Unlike ``Subprocess`` it keeps no stdout (the peers write their file themselves) and may be
/// called from several threads at once.
enum TimedProcess {
    /// How a run ended.
    struct Ending: Sendable {
        /// The exit status; meaningless when ``timedOut``.
        var status: Int32
        /// The deadline passed and the program was killed.
        var timedOut: Bool
        /// The last line it wrote on stderr.
        var lastError: String
    }

    /// Runs `program` (looked up on `PATH` through `/usr/bin/env`, which execs it, so the pid is
    /// the program's) for at most `timeout` seconds. `scratch` is a folder for its stderr.
    static func run(_ program: String, _ arguments: [String], timeout: Double, scratch: String) throws -> Ending {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        let errPath = "\(scratch)/.timed-\(UUID().uuidString.prefix(8)).err"
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer { unlink(errPath) }
        guard let err = FileHandle(forWritingAtPath: errPath) else {
            throw BenchError("cannot create \(errPath)")
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        do {
            try process.run()
        } catch {
            try? err.close()
            throw BenchError("cannot run \(program): \(error)")
        }
        try? err.close()
        let pid = process.processIdentifier
        // Interruption stops what it knows of on Ctrl-C; it calls them schedulers, but a SIGTERM
        // ends curl and wget just as well.
        Interruption.started(scheduler: pid)
        defer { Interruption.stopped(scheduler: pid) }
        var timedOut = false
        if ended.wait(timeout: .now() + max(0.1, timeout)) == .timedOut {
            timedOut = true
            kill(pid, SIGKILL)
            ended.wait()
        }
        process.waitUntilExit()
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        let last = stderr.split(separator: "\n").last.map(String.init) ?? ""
        return Ending(status: process.terminationStatus, timedOut: timedOut, lastError: last)
    }
}
