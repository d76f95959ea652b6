import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The resident memory of an idle `bgtaskd`, an idle `bgtop` on its state and an idle `htop`,
/// read at the same moment.
enum IdleMemory {
    struct Entry {
        var name: String
        /// VmRSS, KiB.
        var resident: Int
        /// Pss from smaps_rollup, KiB: shared pages divided among the processes that map them.
        var proportional: Int?
        /// Whether it maps libcurl (nil: its memory map could not be read).
        var mapsLibcurl: Bool?
        /// Resident pages of its own executable's code (the `r-xp` mapping of `/proc/<pid>/exe`), KiB:
        /// what the start-up order (`Linker/<program>.order`) packs together.
        var ownCode: Int?
    }

    static func measure(scheduler: SchedulerSession, bgtop: String, settle: Double, root: String) throws -> [Entry] {
        let socket = "bgbench-footprint-\(getpid())"
        defer { _ = IdleWakeups.tmux(socket, ["kill-server"], root: root) }
        var pids: [(String, Int32)] = [("bgtaskd", scheduler.pid)]
        for (name, command) in [("bgtop", "exec \(bgtop) --state \(scheduler.paths.root) --config \(scheduler.config)"), ("htop", "exec htop")] {
            let started = IdleWakeups.tmux(socket, ["new-session", "-d", "-s", name, "-x", "160", "-y", "48",
                                                    "-e", "TERM=xterm-256color", command], root: root)
            guard started.status == 0 else { throw BenchError("tmux could not start \(name): \(started.output)") }
            let pane = IdleWakeups.tmux(socket, ["display", "-p", "-t", name, "#{pane_pid}"], root: root)
            guard let pid = Int32(pane.output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw BenchError("tmux did not say \(name)'s pid: \(pane.output)")
            }
            pids.append((name, pid))
        }
        Thread.sleep(forTimeInterval: settle)
        defer { for (name, pid) in pids where name != "bgtaskd" { kill(pid, SIGKILL) } }
        return try pids.map { name, pid in
            guard let resident = ProcStatus.kibibytes(pid, "VmRSS") else { throw BenchError("\(name) (pid \(pid)) exited before it was measured") }
            return Entry(name: name, resident: resident, proportional: proportionalSet(pid), mapsLibcurl: maps(pid, "/libcurl.so"),
                         ownCode: ownCode(pid))
        }
    }

    /// Whether the process maps the Swift runtime as a shared library (`libswiftCore.so`), as
    /// a build without `--static-swift-stdlib` does; nil when its memory map cannot be read.
    static func sharesSwiftRuntime(_ pid: Int32) -> Bool? {
        maps(pid, "/libswiftCore.so")
    }

    /// Whether the process maps a file whose path contains `library`; nil when its memory map
    /// cannot be read.
    static func maps(_ pid: Int32, _ library: String) -> Bool? {
        // Read to the end: String(contentsOfFile:) stops after the first read of a file whose size says 0.
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return nil }
        defer { try? file.close() }
        guard let data = try? file.readToEnd(), !data.isEmpty else { return nil }
        return String(decoding: data, as: UTF8.self).contains(library)
    }

    /// The `Rss:` of the executable mappings of the process's own program file, KiB. A mapping is
    /// the program's when its device and inode are those of `/proc/<pid>/exe` (a path may hold spaces).
    static func ownCode(_ pid: Int32) -> Int? {
        var program = stat()
        guard stat("/proc/\(pid)/exe", &program) == 0,
              let file = FileHandle(forReadingAtPath: "/proc/\(pid)/smaps") else { return nil }
        defer { try? file.close() }
        guard let data = try? file.readToEnd() else { return nil }
        // glibc's major() and minor(), macros Swift does not import.
        let dev = UInt64(program.st_dev)
        let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & ~UInt64(0xfff))
        let minor = (dev & 0xff) | ((dev >> 12) & ~UInt64(0xff))
        let device = String(format: "%02llx:%02llx", major, minor)
        var total = 0
        var inCode = false
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            if let first = fields.first, first.contains("-"), fields.count >= 5 {
                // A mapping's header: range, permissions, offset, device, inode, path.
                inCode = fields[1].contains("x") && fields[3] == device && UInt64(fields[4]) == UInt64(program.st_ino)
            } else if inCode, fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]) {
                total += kib
            }
        }
        return total
    }

    /// `Pss:` of `/proc/<pid>/smaps_rollup`, KiB.
    static func proportionalSet(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Pss:") {
            return line.dropFirst(4).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        }
        return nil
    }
}

/// Programs started and waited for, timed from spawn to exit, in alternation so that a neighbour's
/// burst touches all of them alike.
enum StartToExit {
    static func compare(_ programs: [(name: String, path: String, arguments: [String])], runs: Int,
                        scratch: String) throws -> [(name: String, samples: Samples)] {
        var times: [[Double]] = Array(repeating: [], count: programs.count)
        let null = open("/dev/null", O_WRONLY | O_CLOEXEC)
        defer { close(null) }
        for _ in 0..<runs {
            for (index, program) in programs.enumerated() {
                let begin = DispatchTime.now().uptimeNanoseconds
                let pid: pid_t
                switch ProcessSpawn.start(program.path, arguments: program.arguments, environment: ProcessInfo.processInfo.environment,
                                          stdout: null, stderr: null) {
                case .success(let started): pid = started
                case .failure(let error): throw BenchError("cannot start \(program.path): \(error)")
                }
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                times[index].append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
                guard status == 0 else {
                    let signal = status & 0x7f
                    throw BenchError("\(program.name) " + (signal == 0 ? "exited with status \((status >> 8) & 0xff)" : "was killed by signal \(signal)"))
                }
            }
        }
        return programs.enumerated().map { ($0.element.name, Samples(times[$0.offset])) }
    }

    /// The full path of `program` on `PATH`.
    static func which(_ program: String, scratch: String) throws -> String {
        guard let path = Subprocess.output("sh", ["-c", "command -v \(program)"], scratch: scratch)?
            .trimmingCharacters(in: .whitespacesAndNewlines), path.hasPrefix("/") else {
            throw BenchError("\(program) is not on PATH")
        }
        return path
    }
}
