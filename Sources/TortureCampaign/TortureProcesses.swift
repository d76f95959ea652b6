import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A process as the kernel names it for good: its pid and its start time in clock ticks since
/// boot (`/proc/<pid>/stat` field 22), so a reused pid is never taken for an earlier process.
public struct ProcessName: Hashable, Sendable, CustomStringConvertible {
    public var pid: Int32
    public var startTicks: UInt64

    public var description: String { "pid \(pid) (start \(startTicks))" }
}

/// Reading and signalling the processes of one state directory through `/proc`.
///
/// Every process the scheduler launches for the campaign's apps carries `BGTASK_STATE_DIR=<state>`
/// in its environment, and so do their children (`bgctl complete`): that marker finds them all,
/// whichever scheduler (killed or running) started them.
enum TortureProcesses {
    /// The fields of `/proc/<pid>/stat` that matter here, or `nil` when the process is gone.
    struct Status {
        var state: Character
        var processGroup: Int32
        var startTicks: UInt64
    }

    static func status(_ pid: Int32) -> Status? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = text.lastIndex(of: ")") else { return nil }
        // After the command name: state is field 3, pgrp field 5, starttime field 22.
        let fields = text[text.index(close, offsetBy: 2)...].split(separator: " ")
        guard fields.count > 19, let state = fields[0].first, let group = Int32(fields[2]),
              let ticks = UInt64(fields[19]) else { return nil }
        return Status(state: state, processGroup: group, startTicks: ticks)
    }

    /// Whether `name` is a live process (not a zombie) that is still the same process.
    static func isAlive(_ name: ProcessName) -> Bool {
        guard let status = status(name.pid) else { return false }
        return status.state != "Z" && status.startTicks == name.startTicks
    }

    /// Every live process (not a zombie) whose environment names `state` as its state directory.
    static func marked(state: String) -> [(name: ProcessName, group: Int32)] {
        let marker = Array("BGTASK_STATE_DIR=\(state)".utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var found: [(name: ProcessName, group: Int32)] = []
        for entry in entries {
            guard let pid = Int32(entry), pid != getpid(),
                  let environment = FileManager.default.contents(atPath: "/proc/\(pid)/environ") else { continue }
            let hasMarker = environment.split(separator: 0, omittingEmptySubsequences: true).contains { Array($0) == marker }
            guard hasMarker, let status = status(pid), status.state != "Z" else { continue }
            found.append((name: ProcessName(pid: pid, startTicks: status.startTicks), group: status.processGroup))
        }
        return found
    }

    /// The marked processes that no task record and no attachment names: not the process itself,
    /// nor (for a launch's own process group) the group of a named, live process.
    static func unsupervised(state: String) -> Set<ProcessName> {
        let snapshot = StateSnapshot.load(StatePaths(root: state))
        var named = Set<ProcessName>()
        var groups = Set<Int32>()
        for task in snapshot.tasks {
            guard let ticks = task.processStartTicks else { continue }
            let name = ProcessName(pid: task.pid, startTicks: ticks)
            named.insert(name)
            if let group = task.processGroup, isAlive(name) { groups.insert(group) }
        }
        for app in snapshot.apps {
            guard let attached = app.attachedProcess, let ticks = attached.processStartTicks else { continue }
            let name = ProcessName(pid: attached.pid, startTicks: ticks)
            named.insert(name)
            if let group = attached.processGroup, isAlive(name) { groups.insert(group) }
        }
        return Set(marked(state: state).filter { !named.contains($0.name) && !groups.contains($0.group) }.map(\.name))
    }

    /// SIGKILL to every marked process (and its group), until none is left or `timeout` passes.
    /// Returns how many were still there at the end.
    @discardableResult
    static func killAll(state: String, timeout: TimeInterval = 10) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let left = marked(state: state)
            if left.isEmpty || Date() >= deadline { return left.count }
            for process in left {
                if process.group > 1 && process.group == process.name.pid { kill(-process.group, SIGKILL) }
                kill(process.name.pid, SIGKILL)
            }
            usleep(20_000)
        }
    }
}

extension ProcessName {
    /// When the process started, from its start ticks and the boot time (`btime` in `/proc/stat`),
    /// to within a clock tick; `nil` when those cannot be read.
    var startDate: Date? {
        guard let boot = Self.bootTime else { return nil }
        return Date(timeIntervalSince1970: boot + Double(startTicks) / Double(sysconf(Int32(_SC_CLK_TCK))))
    }

    /// Seconds since 1970 at boot; read once.
    private static let bootTime: Double? = {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }) else { return nil }
        return Double(line.dropFirst(6).trimmingCharacters(in: .whitespaces))
    }()

    /// Whether `event` is about this process: its pid, and a time within the process's life as
    /// the campaign's apps live it (pids are reused: `pid_max` may be 32768, and a long campaign
    /// starts more processes than that).
    func isNamed(by event: Event) -> Bool {
        guard event.pid == pid else { return false }
        guard let start = startDate else { return true }
        let offset = event.time.timeIntervalSince(start)
        return offset >= -1 && offset <= 180
    }
}
