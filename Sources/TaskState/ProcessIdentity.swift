import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A process named by pid and start time, as `/proc/<pid>/stat` gives them (proc(5)): what lets a
/// program signal only a process it can prove is the one it recorded, never a reused pid.
public enum ProcessIdentity {
    /// The process's state letter and start time in clock ticks since boot (fields 3 and 22).
    public static func stat(of pid: Int32) -> (state: Character, startTicks: UInt64?)? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        // The command name (field 2) may hold spaces and parentheses; fields resume after the last ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so field 22 is fields[19].
        guard let state = fields.first?.first else { return nil }
        return (state, fields.count > 19 ? UInt64(fields[19]) : nil)
    }

    /// Whether `pid` runs (not a zombie) and, when `startTicks` is known, is the process that started then.
    public static func isAlive(pid: Int32, startTicks: UInt64?) -> Bool {
        guard kill(pid, 0) == 0 || errno == EPERM, let stat = stat(of: pid) else { return false }
        if stat.state == "Z" || stat.state == "X" { return false }
        guard let startTicks else { return true }
        return stat.startTicks == startTicks
    }
}
