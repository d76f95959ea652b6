import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The peer of `bgbench conditions`: `dbus-monitor`, a plain client of the same bus, printing
/// every `PropertiesChanged`; its stdout is a pipe read as lines arrive.
final class PropertiesMonitor {
    /// The pipe's read end, to wait on with `poll`.
    let descriptor: Int32
    private let pid: pid_t
    private let programs: SpawnedPrograms
    private var pending = Data()
    /// Whether the lines read so far belong to a `PropertiesChanged` message.
    private var insideChange = false
    private var stopped = false

    init(bus: MockSystemBus, programs: SpawnedPrograms, errorPath: String) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw BenchError("cannot make a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        let err = open(errorPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(ends[1])
            if err >= 0 { close(err) }
        }
        do {
            pid = try programs.start(bus.tools.dbusMonitor, [
                "--address", bus.address,
                "type='signal',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged'",
            ], stdout: ends[1], stderr: err >= 0 ? err : ends[1])
        } catch {
            close(ends[0])
            throw error
        }
        descriptor = ends[0]
        self.programs = programs
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    deinit { stop() }

    /// Reads what arrived without blocking; returns the names of the properties that complete
    /// lines of `PropertiesChanged` messages carry (`string "OnBattery"` in its body). Throws
    /// when dbus-monitor has ended.
    func changedProperties() throws -> [String] {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = read(descriptor, &buffer, buffer.count)
            if n > 0 {
                pending.append(contentsOf: buffer[0..<n])
                continue
            }
            if n == 0 { throw BenchError("dbus-monitor ended") }
            if errno == EINTR { continue }
            break
        }
        var names: [String] = []
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
            let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
            pending.removeSubrange(pending.startIndex...newline)
            if let first = line.first, first != " " {
                // A message's header starts at the margin; its body is indented.
                insideChange = line.contains("member=PropertiesChanged")
            } else if insideChange, let name = Self.quotedString(line) {
                names.append(name)
            }
        }
        return names
    }

    /// `abc` from a body line `   string "abc"`.
    private static func quotedString(_ line: String) -> String? {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("string \""), trimmed.hasSuffix("\""), trimmed.count >= 9 else { return nil }
        return String(trimmed.dropFirst("string \"".count).dropLast())
    }

    /// Ends dbus-monitor and closes the pipe.
    func stop() {
        guard !stopped else { return }
        stopped = true
        programs.end(pid)
        close(descriptor)
    }
}
