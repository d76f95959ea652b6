import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs one of the programs being installed to ask it something (its help, its completion scripts).
enum ToolRun {
    /// Its standard output; a non-zero exit is a failure with the first line it printed on stderr.
    static func output(of executable: String, _ arguments: [String]) throws -> Data {
        // stderr into a file, so that only one pipe is read and neither can fill up unread.
        let errorPath = FileManager.default.temporaryDirectory.path + "/bgctl-install-\(getpid())-\(UUID().uuidString.prefix(8)).err"
        guard FileManager.default.createFile(atPath: errorPath, contents: nil),
              let errorFile = FileHandle(forWritingAtPath: errorPath) else {
            throw InstallFailure("cannot create \(errorPath)")
        }
        defer {
            try? errorFile.close()
            unlink(errorPath)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = errorFile
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw InstallFailure("cannot run \(executable): \(error.localizedDescription)")
        }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let text = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
            let line = text.split(separator: "\n").first.map(String.init) ?? "exit \(process.terminationStatus)"
            throw InstallFailure("\(executable) \(arguments.joined(separator: " ")) failed: \(line)")
        }
        return data
    }
}
