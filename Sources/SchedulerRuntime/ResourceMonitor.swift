import CLinuxSupport
import FoundationEssentials
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Measures what each live launch uses: CPU seconds (user plus system) and memory (now and at its
/// peak) of its whole process tree, from its own cgroup (``LaunchCgroups``) where there is one,
/// else summed from `/proc` over its process group and every process of this user that carries
/// its `BGTASK_LAUNCH_ID` (so a `setsid` child that left the group is counted). Every process is
/// named by pid and start time, never by pid alone.
///
/// It samples only while some launch is tracked, at most once a second; with nothing running it
/// is never asked to, and the loop's sampling timer stays disarmed.
final class ResourceMonitor {
    /// Seconds between two samples.
    static let interval = 1.0

    private struct ProcessKey: Hashable {
        var pid: Int32
        var startTicks: UInt64
    }

    private struct Launch {
        var app: Identifier
        var leader: Int32
        var leaderStartTicks: UInt64?
        var group: Int32?
        var startedByScheduler: Bool
        var cgroup: String?
        /// CPU ticks of each process at first sight, for a process older than the launch (a
        /// person's process that took it over): only what it uses after counts.
        var baselines: [ProcessKey: UInt64] = [:]
        /// The last CPU ticks of each process seen, the ended ones included.
        var ticks: [ProcessKey: UInt64] = [:]
        var peakMemory: Int64 = 0
        var lastCPU: (time: Double, seconds: Double)?
    }

    private let stateRoot: String
    private let cgroups: LaunchCgroups?
    private var launches: [String: Launch] = [:]
    /// The launch id each process carries in its environment (`nil`: none of this state
    /// directory's), read once per process.
    private var marks: [ProcessKey: String?] = [:]
    private(set) var lastSampleAt: Double?

    init(stateRoot: String, cgroups: LaunchCgroups?) {
        self.stateRoot = stateRoot
        self.cgroups = cgroups
    }

    var isTracking: Bool { !launches.isEmpty }
    var usesCgroups: Bool { cgroups != nil }

    /// Seconds (monotonic) when the next sample is due.
    var nextSampleAt: Double { (lastSampleAt ?? -.infinity) + Self.interval }

    /// Puts a process the scheduler just started into its launch's cgroup, before the monitor
    /// has tracked it (the earlier, the fewer of its children start outside).
    func place(_ pid: Int32, launchID: String) {
        guard let cgroups, let cgroup = cgroups.cgroup(of: launchID) else { return }
        cgroups.place(pid, in: cgroup)
    }

    /// Tracks the launches `state` knows of: those with tasks, the processes the scheduler
    /// started, and leftovers being ended. A launch the scheduler started whose process is now
    /// the app's attached process, with no task and no ending, is not tracked: the leftover rule
    /// leaves it alone, so there is nothing to watch until it is handed a task.
    func track(_ state: SchedulerState) {
        for task in state.tasks.values where launches[task.launchID] == nil {
            let started = state.processes[task.pid]?.launchID == task.launchID
            launches[task.launchID] = Launch(app: task.app, leader: task.pid, leaderStartTicks: task.processStartTicks,
                                             group: started ? task.processGroup : nil, startedByScheduler: started,
                                             cgroup: started ? cgroup(of: task.launchID, holding: [task.pid]) : nil)
        }
        for entry in state.processes.values where launches[entry.launchID] == nil && entry.killDecidedAt == nil
            && !Self.isSettled(entry.launchID, leader: entry.pid, app: entry.app, startedByScheduler: true, state: state) {
            launches[entry.launchID] = Launch(app: entry.app, leader: entry.pid, leaderStartTicks: entry.processStartTicks,
                                              group: entry.processGroup, startedByScheduler: true,
                                              cgroup: cgroup(of: entry.launchID, holding: [entry.pid]))
        }
        for ending in state.accounting.endings.values where launches[ending.launchID] == nil {
            launches[ending.launchID] = Launch(app: ending.app, leader: ending.members.first?.pid ?? 0,
                                               leaderStartTicks: ending.members.first?.processStartTicks, group: nil,
                                               startedByScheduler: true,
                                               cgroup: cgroup(of: ending.launchID, holding: ending.members.map(\.pid)))
        }
    }

    /// Whether a launch is left alone for good while it has no task: no task of it runs, no
    /// ending of it is in progress, and its process is a person's (the scheduler did not start
    /// it) or the app's attached process. The leftover rule never ends such a process, so
    /// sampling it on would cost a wake-up a second for as long as it lives.
    static func isSettled(_ launchID: String, leader: Int32, app: Identifier, startedByScheduler: Bool,
                          state: SchedulerState) -> Bool {
        guard state.accounting.endings[launchID] == nil, !state.tasks.values.contains(where: { $0.launchID == launchID }) else {
            return false
        }
        return !startedByScheduler || state.apps[app]?.attachedProcess?.pid == leader
    }

    /// The cgroup of a launch: the one its processes are already in when a scheduler before
    /// this one made it (adopted after a restart, so its CPU time and every child stay counted
    /// and `cgroup.kill` still reaches them), else one in this scheduler's subtree.
    private func cgroup(of launchID: String, holding pids: [Int32]) -> String? {
        guard let cgroups else { return nil }
        for pid in pids where pid > 1 {
            if let existing = cgroups.launchCgroup(of: launchID, holding: pid) { return existing }
        }
        return cgroups.cgroup(of: launchID)
    }

    /// Samples every tracked launch. Launches with nothing left running and no task in `state`
    /// are reported once more (with no members, so the core forgets them) and then dropped; so
    /// are settled ones (``isSettled(_:leader:app:startedByScheduler:state:)``), whose processes
    /// live on.
    func sample(now: Date, monotonic: Double, state: SchedulerState) -> (samples: [ResourceSample], report: [LaunchResources]) {
        lastSampleAt = monotonic
        let me = getpid()
        var byGroup: [Int32: String] = [:]
        var byLeader: [Int32: [String]] = [:]
        var byCgroupPID: [Int32: String] = [:]
        for (id, launch) in launches {
            if let group = launch.group { byGroup[group] = id }
            byLeader[launch.leader, default: []].append(id)
            if let cgroup = launch.cgroup, let cgroups {
                for pid in cgroups.pids(in: cgroup) { byCgroupPID[pid] = id }
            }
        }
        var members: [String: [ProcessStatLine]] = [:]
        var live: Set<ProcessKey> = []
        for pid in ProcessStatLine.ownPIDs() where pid != me {
            guard let line = ProcessStatLine.read(pid), !line.isGone else { continue }
            let key = ProcessKey(pid: pid, startTicks: line.startTicks)
            live.insert(key)
            for id in owners(of: line, key: key, byGroup: byGroup, byLeader: byLeader, byCgroupPID: byCgroupPID) {
                members[id, default: []].append(line)
            }
        }
        marks = marks.filter { live.contains($0.key) }

        var samples: [ResourceSample] = []
        var report: [LaunchResources] = []
        for (id, var launch) in launches.sorted(by: { $0.key < $1.key }) {
            let lines = (members[id] ?? []).sorted { $0.pid < $1.pid }
            if let cgroup = launch.cgroup, let cgroups {
                // A child that started before its parent was moved in (or one found by its mark).
                for line in lines where byCgroupPID[line.pid] == nil { cgroups.place(line.pid, in: cgroup) }
            }
            for line in lines {
                let key = ProcessKey(pid: line.pid, startTicks: line.startTicks)
                if !launch.startedByScheduler, launch.baselines[key] == nil { launch.baselines[key] = line.cpuTicks }
                launch.ticks[key] = line.cpuTicks
            }
            let procCPU = launch.ticks.reduce(0.0) { total, entry in
                total + Double(entry.value &- min(launch.baselines[entry.key] ?? 0, entry.value)) / ProcessStatLine.ticksPerSecond
            }
            let cgroupCPU = launch.cgroup.flatMap { cgroups?.cpuSeconds(of: $0) }
            let cpu = max(cgroupCPU ?? procCPU, launch.lastCPU?.seconds ?? 0)
            let cgroupMemory = launch.cgroup.map { cgroups?.memory(of: $0) } ?? nil
            let memory = cgroupMemory?.current ?? lines.reduce(Int64(0)) { $0 + $1.residentPages * ProcessStatLine.pageSize }
            launch.peakMemory = max(launch.peakMemory, memory, cgroupMemory?.peak ?? 0)
            let percent = launch.lastCPU.flatMap { last in
                monotonic > last.time ? (cpu - last.seconds) / (monotonic - last.time) * 100 : nil
            }
            launch.lastCPU = (monotonic, cpu)
            let memberList = lines.map { LeftoverEnding.Member(pid: $0.pid, processStartTicks: $0.startTicks) }
            let leaderAlive = lines.contains { line in line.pid == launch.leader && (launch.leaderStartTicks.map { $0 == line.startTicks } ?? true) }
            samples.append(ResourceSample(launchID: id, app: launch.app, time: monotonic, cpuSeconds: cpu, memoryBytes: memory,
                                          peakMemoryBytes: launch.peakMemory, members: memberList,
                                          startedByScheduler: launch.startedByScheduler, leader: leaderAlive ? launch.leader : nil))
            let hasTasks = state.tasks.values.contains { $0.launchID == id }
            if lines.isEmpty && !hasTasks {
                if let cgroup = launch.cgroup { cgroups?.remove(cgroup) }
                launches[id] = nil
                continue
            }
            if Self.isSettled(id, leader: launch.leader, app: launch.app, startedByScheduler: launch.startedByScheduler, state: state) {
                // Left alone from now on: reported once more with no members, so the core
                // forgets its figures, and no longer sampled (its cgroup, if any, keeps its
                // processes and is removed once they are gone and the subtree is).
                samples[samples.count - 1].members = []
                samples[samples.count - 1].leader = nil
                launches[id] = nil
                continue
            }
            launches[id] = launch
            report.append(LaunchResources(launchID: id, app: launch.app, pids: Array(memberList.map(\.pid).prefix(LaunchResources.maximumPids)),
                                          cpuSeconds: cpu, cpuPercent: percent.map { max($0, 0) }, memoryBytes: memory,
                                          peakMemoryBytes: launch.peakMemory, source: cgroupCPU != nil ? .cgroup : .proc,
                                          phase: state.accounting.endings[id] != nil ? .ending : .running,
                                          sampledAt: now))
        }
        return (samples, report)
    }

    /// Sends `signal` to what is left of a launch: SIGKILL to its whole cgroup where there is one,
    /// and to each member through a pidfd, only while it is still the process that started at its
    /// recorded time.
    func signal(_ members: [LeftoverEnding.Member], launchID: String, signal: Int32) {
        if signal == SIGKILL, let launch = launches[launchID], let cgroup = launch.cgroup { _ = cgroups?.killAll(in: cgroup) }
        for member in members where member.pid > 1 && member.pid != getpid() {
            let descriptor = bg_pidfd_open(member.pid)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            // Checked after the pidfd is open, so the process checked is the one signalled.
            guard ProcessLauncher.isAlive(pid: member.pid, startTicks: member.processStartTicks) else { continue }
            _ = bg_pidfd_send_signal(descriptor, signal)
        }
    }

    /// Removes the cgroup subtree's empty cgroups at the scheduler's stop.
    func stop() {
        cgroups?.removeRoot()
    }

    /// The launches a process belongs to: in its cgroup, its leader, in its process group (and
    /// not older than the leader), or carrying its launch id. Several when a process the
    /// scheduler launched took over a later launch's tasks (an attached app).
    private func owners(of line: ProcessStatLine, key: ProcessKey, byGroup: [Int32: String], byLeader: [Int32: [String]],
                        byCgroupPID: [Int32: String]) -> Set<String> {
        var ids: Set<String> = []
        if let id = byCgroupPID[line.pid] { ids.insert(id) }
        for id in byLeader[line.pid] ?? [] where launches[id]?.leaderStartTicks.map({ $0 == line.startTicks }) ?? true {
            ids.insert(id)
        }
        if let id = byGroup[line.processGroup], let launch = launches[id],
           line.startTicks >= (launch.leaderStartTicks ?? 0) {
            ids.insert(id)
        }
        let mark: String?
        if let cached = marks[key] {
            mark = cached
        } else {
            let environment = MarkedProcessScan.environment(of: line.pid)
            let ours = environment?["BGTASK_STATE_DIR"].map { StatePaths(root: $0).root == stateRoot } == true
            mark = ours ? environment?["BGTASK_LAUNCH_ID"] : nil
            marks[key] = .some(mark)
        }
        if let mark, launches[mark] != nil { ids.insert(mark) }
        return ids
    }
}
