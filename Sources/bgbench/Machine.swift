import Foundation

/// The machine a run was measured on, printed at the top of the report so numbers are never
/// quoted without their context.
struct Machine: Sendable {
    var processors: Int
    var cpuModel: String
    var kernel: String
    /// The benchmark folder, which holds bgtop's state and the SQLite databases alike.
    var directory: String
    /// `stat -f -c %T` of the folder (reports ext4 as `ext2/ext3`).
    var fileSystemType: String
    /// `findmnt -T`: the mounted file system's type and source, when findmnt exists.
    var mount: String?
    /// For ext3/ext4: whether the kernel runs a jbd2 journal for the device. Without one, fsync
    /// writes the file and its inode but commits no journal transaction, which makes it cheap.
    var journal: String?

    /// Looks at the machine; `directory` is where the benchmark writes.
    static func describe(directory: String, scratch: String) -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n")
            .first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let mount = Subprocess.output("findmnt", ["-n", "-o", "FSTYPE,SOURCE", "-T", directory], scratch: scratch)
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        return Machine(
            processors: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: model,
            kernel: Subprocess.output("uname", ["-sr"], scratch: scratch) ?? "unknown kernel",
            directory: directory,
            fileSystemType: Subprocess.output("stat", ["-f", "-c", "%T", directory], scratch: scratch) ?? "unknown",
            mount: mount.map { $0.joined(separator: " on ") },
            journal: mount.flatMap { journal(type: $0.first, source: $0.last) })
    }

    /// `jbd2 journal` or `no jbd2 journal` for ext3/ext4 devices, from `/proc/fs/jbd2/<dev>-8`.
    private static func journal(type: String?, source: String?) -> String? {
        guard let type, type == "ext4" || type == "ext3", let source, source.hasPrefix("/dev/") else { return nil }
        let device = String(source.dropFirst("/dev/".count))
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/fs/jbd2")) ?? []
        return entries.contains { $0.hasPrefix("\(device)-") } ? "jbd2 journal" : "no jbd2 journal"
    }

    /// `/proc/loadavg`'s 1, 5 and 15 minute load averages: how busy the machine was.
    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// `fs.inotify.max_user_instances`: inotify instances a user may hold at once, all programs together.
    static var inotifyInstanceLimit: String {
        ((try? String(contentsOfFile: "/proc/sys/fs/inotify/max_user_instances", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Lines for the report header.
    var lines: [String] {
        var fileSystem = "\(fileSystemType) (stat -f -c %T)"
        if let mount { fileSystem += ", \(mount) (findmnt)" }
        if let journal { fileSystem += ", \(journal)" }
        return [
            "machine:     \(processors) CPUs (nproc), \(cpuModel), \(kernel)",
            "directory:   \(directory) on \(fileSystem)",
            "load:        \(Self.loadAverage) (1, 5, 15 min) at start",
        ]
    }
}
