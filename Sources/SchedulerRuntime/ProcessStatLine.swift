import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The figures the resource monitor reads from `/proc/<pid>/stat` (proc(5)).
struct ProcessStatLine: Equatable {
    var pid: Int32
    /// Field 3: `R`, `S`, `D`, `Z`, ...
    var state: Character
    /// Field 5.
    var processGroup: Int32
    /// Fields 14 and 15, user plus system time, in clock ticks.
    var cpuTicks: UInt64
    /// Field 22, in clock ticks since boot: with the pid, names the process.
    var startTicks: UInt64
    /// Field 24, resident pages.
    var residentPages: Int64

    var isGone: Bool { state == "Z" || state == "X" }

    static let ticksPerSecond = Double(max(sysconf(Int32(_SC_CLK_TCK)), 1))
    static let pageSize = Int64(max(sysconf(Int32(_SC_PAGESIZE)), 1))

    /// Reads the line, or `nil` when the process is gone or the line is not understood.
    static func read(_ pid: Int32) -> ProcessStatLine? {
        let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let count = Glibc.read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return nil }
        return parse(String(decoding: buffer[0..<count], as: UTF8.self), pid: pid)
    }

    static func parse(_ text: String, pid: Int32) -> ProcessStatLine? {
        // The command name (field 2) may hold spaces and parentheses; fields resume after the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3.
        guard fields.count > 21, let state = fields[0].first, let group = Int32(fields[2]),
              let user = UInt64(fields[11]), let system = UInt64(fields[12]), let start = UInt64(fields[19]),
              let resident = Int64(fields[21]) else { return nil }
        return ProcessStatLine(pid: pid, state: state, processGroup: group, cpuTicks: user &+ system, startTicks: start,
                               residentPages: max(resident, 0))
    }

    /// The pids of this user's processes (only those: another user's are none of the scheduler's).
    static func ownPIDs() -> [Int32] {
        let uid = getuid()
        guard let directory = opendir("/proc") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid > 1 else { continue }
            var info = stat()
            guard lstat("/proc/\(name)", &info) == 0, info.st_uid == uid else { continue }
            pids.append(pid)
        }
        return pids
    }
}
