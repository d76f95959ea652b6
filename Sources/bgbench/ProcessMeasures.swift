import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// What bgbench reads about processes and programs: /proc status and CPU time, rusage, the
// programs built beside it, and unit conversions the reports share.

/// Fields of `/proc/<pid>/status`.
enum ProcStatus {
    /// A `kB` field such as `VmHWM` or `VmRSS`, in KiB.
    static func kibibytes(_ pid: Int32, _ field: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
            // "VmHWM:\t    5432 kB"
            return line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first
                .flatMap { Int($0) }
        }
        return nil
    }
}

/// CPU seconds, user and system.
struct CPUTime: Sendable {
    var user: Double
    var system: Double
}

/// `getrusage` CPU time in seconds.
enum ResourceUsage {
    /// This process (`children: false`), or its children that have been waited for.
    static func cpu(children: Bool) -> CPUTime {
        var usage = rusage()
        guard (children ? getrusage(RUSAGE_CHILDREN.rawValue, &usage) : getrusage(RUSAGE_SELF.rawValue, &usage)) == 0 else {
            return CPUTime(user: 0, system: 0)
        }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return CPUTime(user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }

    /// This process's user + system CPU.
    static func cpuSeconds(children: Bool) -> Double {
        let time = cpu(children: children)
        return time.user + time.system
    }
}

/// Finds a program built beside the running `bgbench`, as ``SchedulerBinary`` does for bgtaskd.
enum SiblingBinary {
    static func locate(_ name: String) -> String? {
        let folders = [
            URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent(),
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
        ]
        return folders.map { $0.appendingPathComponent(name).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}

extension Duration {
    var seconds: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }
}

extension Int64 {
    func clamped(_ low: Int64, _ high: Int64) -> Int64 { Swift.min(Swift.max(self, low), high) }
}
