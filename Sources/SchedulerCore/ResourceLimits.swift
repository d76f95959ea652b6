import FoundationEssentials
import TaskState

/// The CPU monitor: launches that use more CPU (or memory) than the settings allow are expired
/// through the normal path (``SchedulerState/expireRunning(at:only:reasons:)``: expiration signal,
/// grace, kill), with reason `cpuLimit` or `memoryLimit`. See `docs/scheduling.md#the-cpu-monitor`.
extension SchedulerState {
    /// Takes the resource monitor's samples: keeps each launch's figures and CPU window, expires
    /// the tasks over a limit, and ends what is left of launches whose tasks are all finished
    /// (``endLeftovers(_:now:)``). Returns what the runtime must carry out.
    public mutating func applyResourceSamples(_ samples: [ResourceSample], now: Date) -> [SchedulerEffect] {
        var overLimit: [TaskKey: String] = [:]
        for sample in samples {
            let launchTasks = tasks.values.filter { $0.launchID == sample.launchID }
            if sample.members.isEmpty && launchTasks.isEmpty {
                forgetResources(of: sample.launchID)
                continue
            }
            let previous = accounting.usage[sample.launchID]
            accounting.usage[sample.launchID] = ResourceAccounting.Usage(
                cpuSeconds: max(sample.cpuSeconds, previous?.cpuSeconds ?? 0),
                peakMemoryBytes: max(sample.peakMemoryBytes, sample.memoryBytes, previous?.peakMemoryBytes ?? 0))
            var window = accounting.windows[sample.launchID].flatMap { $0.windowSeconds == settings.cpuLimitWindowSeconds ? $0 : nil }
                ?? CPUWindow(windowSeconds: settings.cpuLimitWindowSeconds)
            window.add(CPUWindow.Sample(time: sample.time, cpuSeconds: sample.cpuSeconds))
            accounting.windows[sample.launchID] = window
            guard isJudgedByCPUMonitor(sample, tasks: launchTasks) else { continue }
            for task in launchTasks.sorted(by: { $0.key < $1.key }) where task.state == .running {
                if let why = limitExceeded(window: window, memoryBytes: sample.memoryBytes) { overLimit[task.key] = why }
            }
        }
        var effects: [SchedulerEffect] = []
        if !overLimit.isEmpty {
            for (key, why) in overLimit {
                guard var task = tasks[key] else { continue }
                task.deadline = min(task.deadline, now)
                setTask(task)
                var record = app(task.app)
                record.lastCpuLimitAt = now
                record.lastCpuLimitReason = why
                setApp(record)
            }
            effects += expireRunning(at: now, only: Set(overLimit.keys), reasons: overLimit)
        }
        return effects + endLeftovers(samples, now: now)
    }

    /// Whether the CPU monitor watches `task`: every kind but processing on external power, which
    /// may use the CPU as it needs (Apple lets processing tasks turn the CPU monitor off).
    func isWatchedByCPUMonitor(_ task: LaunchedTask) -> Bool {
        task.kind != .processing || !conditions.effective.externalPower
    }

    /// Whether the CPU monitor judges a launch at all. The figures are the whole launch's (its
    /// process tree), so it is not judged while any task in it is exempt (one of its own, or one
    /// its processes carry for another launch): the CPU an exempt processing task burns would
    /// otherwise expire, then kill, the refresh beside it and the processing task with it. Nor
    /// is a launch judged whose tasks run in a process the scheduler did not start (handed to a
    /// person's attached app, or a finishing task a person's process began): that process is the
    /// person's, and what it uses in the foreground is not charged to the task.
    func isJudgedByCPUMonitor(_ sample: ResourceSample, tasks launchTasks: [LaunchedTask]) -> Bool {
        let members = Set(sample.members.map(\.pid))
        let carried = tasks.values.filter { members.contains($0.pid) }
        if (launchTasks + carried).contains(where: { !isWatchedByCPUMonitor($0) }) { return false }
        return launchTasks.contains { isStartedByScheduler($0) }
    }

    /// Whether the scheduler started the process `task` runs in (the ledger names it, with its
    /// start time, and no kill of it is decided, which is how a person's process gets there).
    func isStartedByScheduler(_ task: LaunchedTask) -> Bool {
        guard let entry = processes[task.pid], entry.killDecidedAt == nil else { return false }
        guard let recorded = entry.processStartTicks, let current = task.processStartTicks else { return true }
        return recorded == current
    }

    /// `cpuLimit: …` or `memoryLimit: …` with what was measured, when a limit is exceeded.
    func limitExceeded(window: CPUWindow, memoryBytes: Int64) -> String? {
        if settings.cpuLimitPercent > 0, let average = window.averagePercent, average > settings.cpuLimitPercent {
            return "cpuLimit: \(String(printf: "%.0f", average))% of a core over \(SafeNumber.secondsText(settings.cpuLimitWindowSeconds)) s "
                + "(limit \(SafeNumber.secondsText(settings.cpuLimitPercent))%)"
        }
        let limit = Int64(settings.memoryLimitMiB) << 20
        if limit > 0, memoryBytes > limit {
            return "memoryLimit: \(memoryBytes >> 20) MiB held (limit \(settings.memoryLimitMiB) MiB)"
        }
        return nil
    }

    /// The last figures of a launch, for the events that end its tasks.
    func resourceUsage(of task: LaunchedTask) -> ResourceAccounting.Usage? {
        accounting.usage[task.launchID]
    }

    /// Nothing of the launch runs and it has no task left: its figures are forgotten.
    mutating func forgetResources(of launchID: String) {
        accounting.usage[launchID] = nil
        accounting.windows[launchID] = nil
        accounting.idleSince[launchID] = nil
        if accounting.endings.removeValue(forKey: launchID) != nil { changes.processes = true }
    }
}
