import FoundationEssentials
import TaskState

extension SchedulerState {
    /// `_simulateExpirationForTaskWithIdentifier:`: the task's deadline becomes now, and
    /// ``apply(_:now:)`` takes it through the real expiry path at once.
    mutating func simulateExpiration(identifier: Identifier, app: Identifier?, now: Date) -> Result<(TaskKey, String), SchedulerError> {
        let candidates = tasks.values.filter { $0.identifier == identifier && (app == nil || $0.app == app) }
        guard !candidates.isEmpty else {
            return .failure(.noSuchTask("no running task with identifier \(identifier)"))
        }
        guard candidates.count == 1, var task = candidates.first else {
            let apps = candidates.map(\.app.rawValue).sorted().joined(separator: ", ")
            return .failure(.ambiguous("identifier \(identifier) is running for several apps (\(apps)); pass --app"))
        }
        guard task.state == .running else {
            return .failure(.alreadyExpiring("task with identifier \(identifier) is already expiring"))
        }
        task.deadline = now
        setTask(task)
        return .success((task.key, "\(identifier) expired; pid \(task.pid) sent \(task.expirationSignal)"))
    }

    /// Moves tasks past their deadline to `expiring` and kills those past their grace period.
    public mutating func expire(at now: Date) -> [SchedulerEffect] {
        expireRunning(at: now) + killOverdue(at: now)
    }

    /// Moves the running tasks past their deadline (of `only`, when given) to `expiring`; returns
    /// the expiration signals to send. `reasons` gives why a task expires before its budget ran
    /// out (`cpuLimit: …`, the CPU monitor): the event's reason is the word before the colon.
    public mutating func expireRunning(at now: Date, only: Set<TaskKey>? = nil, reasons: [TaskKey: String] = [:]) -> [SchedulerEffect] {
        var actions: [SchedulerEffect] = []
        var notified: [Int32: (String, [TaskKey])] = [:]
        for task in tasks.values.sorted(by: { $0.key < $1.key })
        where task.state == .running && task.deadline <= now && only?.contains(task.key) != false {
            var expiring = task
            expiring.state = .expiring
            expiring.expiringSince = now
            expiring.killDeadline = now.addingTimeInterval(settings.expirationGraceSeconds)
            expiring.unrecordedExpiry = nil
            setTask(expiring)
            notified[task.pid, default: (task.expirationSignal, [])].1.append(task.key)
            recordExpiry(of: task, at: now, why: reasons[task.key], grace: settings.expirationGraceSeconds)
        }
        for (pid, entry) in notified.sorted(by: { $0.key < $1.key }) {
            actions.append(.notifyExpiration(pid: pid, signal: entry.0, tasks: entry.1))
        }
        return actions
    }

    /// Tasks the expiry alarm expired whose expiry no commit recorded (``LaunchedTask/unrecordedExpiry``:
    /// the scheduler stopped between the alarm's signal and its next commit). Their expiries are
    /// recorded as of when the alarm fired (the event, the app's count); their processes were
    /// signalled then, so no signal goes out again. Called at start-up.
    public mutating func recordUnrecordedExpiries() {
        for task in tasks.values.sorted(by: { $0.key < $1.key }) where task.unrecordedExpiry == true && task.state == .expiring {
            var recorded = task
            recorded.unrecordedExpiry = nil
            setTask(recorded)
            let at = task.expiringSince ?? task.deadline
            recordExpiry(of: task, at: at, why: nil, grace: (task.killDeadline ?? at).timeIntervalSince(at))
        }
    }

    /// The expiry of `task` at `now` in the app's counts and the event log.
    private mutating func recordExpiry(of task: LaunchedTask, at now: Date, why: String?, grace: TimeInterval) {
        var appRecord = app(task.app)
        appRecord.activity = appRecord.activity ?? AppActivity()
        appRecord.activity?.count(.expiry, at: now)
        setApp(appRecord)
        let usage = resourceUsage(of: task)
        record(Event(time: now, type: .expired, app: task.app, identifier: task.identifier, kind: task.kind, pid: task.pid,
                     reason: why.map { text in String(text.prefix { $0 != ":" }) } ?? task.expirationSignal,
                     message: "\(task.app): \(task.identifier) expired\(why.map { " (\($0))" } ?? ""); pid \(task.pid) sent \(task.expirationSignal), killed in \(Self.seconds(grace)) unless it completes",
                     cpuSeconds: usage?.cpuSeconds, peakMemoryBytes: usage?.peakMemoryBytes))
    }

    /// Kills the processes of expiring tasks past their grace period.
    public mutating func killOverdue(at now: Date) -> [SchedulerEffect] {
        var actions: [SchedulerEffect] = []
        var killedPIDs: Set<Int32> = []
        for task in tasks.values.sorted(by: { $0.key < $1.key })
        where task.state == .expiring && (task.killDeadline ?? now) <= now && !killedPIDs.contains(task.pid) {
            killedPIDs.insert(task.pid)
            let sharing = tasks.values.filter { $0.pid == task.pid }.sorted { $0.key < $1.key }
            for victim in sharing {
                removeTask(victim.key)
                let why = victim.key == task.key
                    ? "\(victim.identifier) did not complete within its grace period"
                    : "\(victim.identifier) ended with its process because \(task.identifier) overran"
                let usage = resourceUsage(of: victim)
                record(Event(time: now, type: .killed, app: victim.app, identifier: victim.identifier, kind: victim.kind,
                             pid: victim.pid, reason: victim.key == task.key ? "overran" : "sharedProcess",
                             message: "\(victim.app): killed pid \(victim.pid): \(why)",
                             cpuSeconds: usage?.cpuSeconds, peakMemoryBytes: usage?.peakMemoryBytes))
            }
            // Finishing tasks carry no group; a launch in the same process does.
            let group = sharing.lazy.compactMap(\.processGroup).first
            noteKillDecided(of: task, processGroup: group, now: now)
            actions.append(.kill(pid: task.pid, processGroup: group, tasks: sharing.map(\.key)))
            throttle(task.app, cause: "\(task.identifier) overran", now: now)
            if task.kind == .remoteNotification { cutPushBudget(of: task.app, why: "overran a push's runtime", now: now) }
        }
        return actions
    }

    mutating func throttle(_ appID: Identifier, cause: String, now: Date) {
        var record = app(appID)
        record.killCount = SafeNumber.sum(record.killCount, 1)
        record.throttleCause = cause
        record.activity = record.activity ?? AppActivity()
        record.activity?.count(.kill, at: now)
        record.throttleLevel = SafeNumber.sum(max(record.throttleLevel, 0), 1)
        let delay = settings.throttleDelay(level: record.throttleLevel)
        record.throttledUntil = now.addingTimeInterval(delay)
        setApp(record)
        self.record(Event(time: now, type: .throttled, app: appID, reason: "level \(record.throttleLevel)",
                          message: "\(appID): throttled for \(Self.seconds(delay)) after overrunning (\(record.throttleLevel) in a row)"))
    }

    /// A process the scheduler watches has exited; its unfinished tasks end with it.
    ///
    /// A process that died of the expiration signal itself had no handler for it: that is an
    /// overrun like any other, and the app is throttled.
    public mutating func processExited(pid: Int32, status: String, signal: Int32? = nil, now: Date) {
        var overranApp: Identifier?
        var overranCause = ""
        var overranPush = false
        for task in tasks.values.sorted(by: { $0.key < $1.key }) where task.pid == pid {
            removeTask(task.key)
            if task.state == .expiring, let signal, SignalName.number(of: task.expirationSignal) == signal {
                overranApp = task.app
                overranCause = "\(task.identifier) died of \(task.expirationSignal)"
                overranPush = overranPush || task.kind == .remoteNotification
            }
            record(Event(time: now, type: .exited, app: task.app, identifier: task.identifier, kind: task.kind, pid: pid,
                         reason: status,
                         message: "\(task.app): pid \(pid) \(status) without completing \(task.identifier)"))
        }
        if let overranApp { throttle(overranApp, cause: overranCause, now: now) }
        if let overranApp, overranPush { cutPushBudget(of: overranApp, why: "overran a push's runtime", now: now) }
        removeProcess(pid)
        releaseAttachments(ofExited: pid, status: status, now: now)
    }

    /// Records which process a task's pid is (its start time), so a reused pid is never mistaken for it.
    public mutating func recordProcessIdentity(of key: TaskKey, startTicks: UInt64?) {
        guard var task = tasks[key], task.processStartTicks == nil, let startTicks else { return }
        task.processStartTicks = startTicks
        setTask(task)
    }

    /// After a scheduler restart: tasks whose process still runs are adopted with their deadlines.
    /// Returns the pids of the others, which stay until ``interruptTasks(ofGone:now:)``: the inbox
    /// may hold a completion their process wrote while the scheduler was down, and it counts.
    @discardableResult
    public mutating func adoptTasks(now: Date, isAlive: (LaunchedTask) -> Bool) -> Set<Int32> {
        var gone: Set<Int32> = []
        for task in tasks.values.sorted(by: { $0.key < $1.key }) {
            if isAlive(task) {
                record(Event(time: now, type: .adopted, app: task.app, identifier: task.identifier, kind: task.kind,
                             pid: task.pid, message: "\(task.app): adopted running pid \(task.pid) for \(task.identifier)"))
            } else {
                gone.insert(task.pid)
            }
        }
        return gone
    }

    /// The tasks of processes found gone at start-up, once the inbox is applied, are recorded as
    /// interrupted.
    public mutating func interruptTasks(ofGone pids: Set<Int32>, now: Date) {
        for task in tasks.values.sorted(by: { $0.key < $1.key }) where pids.contains(task.pid) {
            removeTask(task.key)
            record(Event(time: now, type: .interrupted, app: task.app, identifier: task.identifier, kind: task.kind,
                         pid: task.pid,
                         message: "\(task.app): \(task.identifier) was interrupted: pid \(task.pid) is gone after a scheduler restart"))
        }
        for pid in pids { removeProcess(pid) }
    }

    /// The pids the runtime must watch.
    public var watchedPIDs: Set<Int32> { Set(tasks.values.map(\.pid)).union(attachedPIDs).union(processes.keys) }

    static func seconds(_ value: TimeInterval) -> String {
        value.isFinite && value == value.rounded() ? "\(SafeNumber.secondsText(value)) s" : String(printf: "%.1f s", value)
    }
}
