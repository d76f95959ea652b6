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

    /// Looks at the machine; `directory` is where the benchmark writes.
    static func describe(directory: String, scratch: String) -> Machine {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = cpuinfo.split(separator: "\n")
            .first { $0.hasPrefix("model name") }
            .flatMap { $0.split(separator: ":", maxSplits: 1).last }
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        return Machine(
            processors: ProcessInfo.processInfo.activeProcessorCount,
            cpuModel: model,
            kernel: Subprocess.output("uname", ["-sr"], scratch: scratch) ?? "unknown kernel",
            directory: directory,
            fileSystemType: Subprocess.output("stat", ["-f", "-c", "%T", directory], scratch: scratch) ?? "unknown",
            mount: Subprocess.output("findmnt", ["-n", "-o", "FSTYPE,SOURCE", "-T", directory], scratch: scratch)
                .map { $0.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " on ") })
    }

    /// Lines for the report header.
    var lines: [String] {
        var fileSystem = "\(fileSystemType) (stat -f -c %T)"
        if let mount { fileSystem += ", \(mount) (findmnt)" }
        return [
            "machine:     \(processors) CPUs (nproc), \(cpuModel), \(kernel)",
            "directory:   \(directory) on \(fileSystem)",
        ]
    }
}
