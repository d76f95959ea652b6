import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A program started without waiting for it: the campaign's loop hands downloads over with
/// `bgctl` while it goes on watching records and killing the daemon, so a `bgctl` that waits for
/// a killed daemon's answer (up to 10 s) holds up nothing but its own trial.
final class BackgroundCommand {
    private let process = Process()
    private let errPath: String

    /// Starts `executable` with `arguments`; its stderr goes to a file in `scratch`.
    init(_ executable: String, _ arguments: [String], scratch: String) throws {
        errPath = "\(scratch)/.command-\(UUID().uuidString.prefix(8)).err"
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        guard let err = FileHandle(forWritingAtPath: errPath) else { throw BenchError("cannot create \(errPath)") }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        do {
            try process.run()
        } catch {
            try? err.close()
            unlink(errPath)
            throw BenchError("cannot run \(executable): \(error)")
        }
        try? err.close()
        // Interruption calls what it stops schedulers; a SIGTERM ends bgctl just as well.
        Interruption.started(scheduler: process.processIdentifier)
    }

    deinit {
        stop()
        unlink(errPath)
    }

    /// The exit status and stderr once the program has ended; `nil` while it runs.
    var ending: (status: Int32, stderr: String)? {
        guard !process.isRunning else { return nil }
        Interruption.stopped(scheduler: process.processIdentifier)
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return (process.terminationStatus, stderr.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Kills the program if it still runs, and waits for it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        Interruption.stopped(scheduler: process.processIdentifier)
    }
}
