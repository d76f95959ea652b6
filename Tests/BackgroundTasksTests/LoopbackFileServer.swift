import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Python's `http.server` on 127.0.0.1 and a free port, serving a folder: a real HTTP peer for
/// apps under test. It logs each request line to stderr, which tells what was asked.
final class LoopbackFileServer: @unchecked Sendable {
    let pid: pid_t
    let port: Int
    private let logPath: String

    init(root: String) throws {
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        logPath = root + "/../http-server"
        pid = try Spawn.start("/usr/bin/env", ["python3", "-u", "-m", "http.server", "0", "--bind", "127.0.0.1", "--directory", root],
                              environment: ProcessInfo.processInfo.environment, stdout: logPath + ".out", stderr: logPath + ".err")
        let deadline = Date().addingTimeInterval(10)
        var found: Int?
        while found == nil && Date() < deadline {
            let text = (try? String(contentsOfFile: logPath + ".out", encoding: .utf8)) ?? ""
            // "Serving HTTP on 127.0.0.1 port 41234 (http://127.0.0.1:41234/) ..."
            if let range = text.range(of: " port ") {
                found = Int(text[range.upperBound...].prefix { $0.isNumber })
            } else {
                usleep(20_000)
            }
        }
        guard let found else {
            kill(pid, SIGKILL)
            _ = Spawn.wait(pid)
            throw TestFailure("python3 http.server did not start")
        }
        port = found
    }

    /// The paths requested so far.
    var requests: [String] {
        let text = (try? String(contentsOfFile: logPath + ".err", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let start = line.range(of: "\"GET ") else { return nil }
            return String(line[start.upperBound...].prefix { $0 != " " })
        }
    }

    func stop() {
        kill(pid, SIGTERM)
        _ = Spawn.wait(pid)
    }
}
