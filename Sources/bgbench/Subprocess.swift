import Foundation

/// Runs short helper programs (`stat`, `uname`, `python3`) and captures what they print.
///
/// Output goes through files rather than pipes, so that a grandchild which keeps an inherited
/// descriptor open can never leave the benchmark waiting for end-of-file.
enum Subprocess {
    /// What a finished program printed and how it ended.
    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String

        var succeeded: Bool { status == 0 }
        /// stdout without its trailing newline.
        var text: String { stdout.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// A program could not be started at all.
    struct StartFailure: Error, CustomStringConvertible {
        var program: String
        var reason: String
        var description: String { "cannot run \(program): \(reason)" }
    }

    /// Runs `program` (looked up on `PATH` through `/usr/bin/env`) and waits for it.
    /// `scratch` is a private folder for the captured output.
    static func run(_ program: String, _ arguments: [String], scratch: String,
                    environment extra: [String: String] = [:]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [program] + arguments
        var environment = ProcessInfo.processInfo.environment
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let stem = "\(scratch)/.run-\(UUID().uuidString.prefix(8))"
        let outPath = stem + ".out", errPath = stem + ".err"
        _ = FileManager.default.createFile(atPath: outPath, contents: nil)
        _ = FileManager.default.createFile(atPath: errPath, contents: nil)
        defer {
            try? FileManager.default.removeItem(atPath: outPath)
            try? FileManager.default.removeItem(atPath: errPath)
        }
        guard let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath) else {
            throw StartFailure(program: program, reason: "cannot create output files in \(scratch)")
        }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        do {
            try process.run()
        } catch {
            throw StartFailure(program: program, reason: "\(error)")
        }
        process.waitUntilExit()
        try? out.close()
        try? err.close()
        let stdout = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        // `env` exits 127 when it cannot find the program.
        if process.terminationStatus == 127 && stdout.isEmpty {
            throw StartFailure(program: program, reason: stderr.isEmpty ? "not found on PATH" : stderr.trimmingCharacters(in: .newlines))
        }
        return Result(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// The trimmed stdout of a program that is expected to succeed, or `nil`.
    static func output(_ program: String, _ arguments: [String], scratch: String) -> String? {
        guard let result = try? run(program, arguments, scratch: scratch), result.succeeded else { return nil }
        return result.text
    }
}
