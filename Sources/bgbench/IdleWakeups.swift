import CLinuxSupport
import Foundation
import TaskState

/// Wake-ups of an idle `bgtop` beside an idle `htop`, both in a real terminal (tmux), counted at
/// the same time from the kernel's context-switch counters.
enum IdleWakeups {
    struct Entry {
        var name: String
        var wakeups: Int?
        var note: String
    }

    static func measure(seconds: Double, root: String) throws -> [Entry] {
        let socket = "bgbench-\(getpid())"
        defer { _ = tmux(socket, ["kill-server"], root: root) }
        try FileManager.default.createDirectory(atPath: root + "/config/apps", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/state", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let bgtop = try locate("bgtop")
        var programs: [(String, String)] = [("bgtop", "exec \(bgtop) --state \(root)/state --config \(root)/config")]
        if Subprocess.output("sh", ["-c", "command -v htop"], scratch: root) != nil {
            programs.append(("htop", "exec htop"))
        }
        var pids: [String: Int32] = [:]
        for (name, command) in programs {
            let started = tmux(socket, ["new-session", "-d", "-s", name, "-x", "160", "-y", "48",
                                        "-e", "TERM=xterm-256color", command], root: root)
            guard started.status == 0 else { throw BenchError("tmux could not start \(name): \(started.output)") }
            let pane = tmux(socket, ["display", "-p", "-t", name, "#{pane_pid}"], root: root)
            pids[name] = Int32(pane.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        // Let both draw their first screens and settle.
        Thread.sleep(forTimeInterval: 2)
        let before = pids.mapValues(contextSwitches)
        Thread.sleep(forTimeInterval: seconds)
        let after = pids.mapValues(contextSwitches)
        for pid in pids.values { kill(pid, SIGKILL) }
        var entries: [Entry] = []
        for (name, _) in programs {
            if let start = before[name] ?? nil, let end = after[name] ?? nil {
                entries.append(Entry(name: name, wakeups: end - start, note: ""))
            } else {
                entries.append(Entry(name: name, wakeups: nil, note: "exited early"))
            }
        }
        if programs.count == 1 { entries.append(Entry(name: "htop", wakeups: nil, note: "not installed: apt-get install htop")) }
        return entries
    }

    /// Voluntary plus involuntary context switches of every thread; `nil` when the process is gone.
    static func contextSwitches(_ pid: Int32) -> Int? {
        guard let threads = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        var total = 0
        for thread in threads {
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
                total += Int(line.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? 0
            }
        }
        return total
    }

    /// Runs tmux with a clean signal mask: a tmux server started from a process whose threads
    /// block signals (as Foundation's would pass on) cannot manage its panes properly.
    static func tmux(_ socket: String, _ arguments: [String], root: String) -> (status: Int32, output: String) {
        let output = "\(root)/.tmux-\(UUID().uuidString.prefix(8)).out"
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(fd)
            unlink(output)
        }
        let pid: pid_t
        switch ProcessSpawn.start("/usr/bin/tmux", arguments: ["-L", socket] + arguments,
                                  environment: ProcessInfo.processInfo.environment, stdout: fd, stderr: fd) {
        case .success(let started): pid = started
        case .failure(let error): return (127, error.description)
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return ((status >> 8) & 0xff, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
    }

    /// A program built beside bgbench.
    static func locate(_ name: String) throws -> String {
        let folder = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        let candidate = folder.appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw BenchError("\(name) is not beside bgbench in \(folder.path); run: swift run -c release bgbench dashboard")
        }
        return candidate
    }
}
