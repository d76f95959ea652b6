import FoundationEssentials
import TaskState

/// A process found at start-up that carries this state directory's launch environment
/// (`BGTASK_STATE_DIR`, `BGTASK_LAUNCH_ID`): the runtime reads these from `/proc`.
public struct MarkedProcess: Sendable, Hashable {
    public var pid: Int32
    public var processStartTicks: UInt64?
    /// `BGTASK_LAUNCH_ID` from its environment.
    public var launchID: String
    /// `BGTASK_APP_ID` from its environment, when it is a valid identifier.
    public var app: Identifier?
    /// Whether it leads its own process group (a launch's first process does).
    public var leadsGroup: Bool
    /// When it started (to the second), when that could be read.
    public var startedAt: Date?

    public init(pid: Int32, processStartTicks: UInt64?, launchID: String, app: Identifier?, leadsGroup: Bool,
                startedAt: Date? = nil) {
        self.pid = pid
        self.processStartTicks = processStartTicks
        self.launchID = launchID
        self.app = app
        self.leadsGroup = leadsGroup
        self.startedAt = startedAt
    }
}

/// Keeping every process the scheduler started under supervision across `kill -9`.
///
/// A launch is recorded in `processes.json` in the commit that records its tasks; a kill is
/// recorded there in the commit that decides it, and carried out after. What a crash can leave:
/// a process whose kill was committed but never sent (killed at the next start), and a process
/// started in a turn whose commit never happened (its requests are still pending, so it is ended
/// and they are launched again).
extension SchedulerState {
    /// A new process was started for `plan`.
    mutating func noteProcessStarted(_ plan: LaunchPlan, pid: Int32, processGroup: Int32?, processStartTicks: UInt64?, now: Date) {
        setProcess(ProcessLedger.Entry(pid: pid, processStartTicks: processStartTicks, processGroup: processGroup,
                                       app: plan.app, launchID: plan.launchID, launchedAt: now))
    }

    /// The kill of `task`'s process is decided: recorded before it is sent.
    mutating func noteKillDecided(of task: LaunchedTask, processGroup: Int32?, now: Date) {
        var entry = processes[task.pid] ?? ProcessLedger.Entry(
            pid: task.pid, processStartTicks: task.processStartTicks, processGroup: processGroup,
            app: task.app, launchID: task.launchID, launchedAt: task.startedAt)
        entry.killDecidedAt = entry.killDecidedAt ?? now
        setProcess(entry)
    }

    /// After a restart: forgets ledger processes that are gone, kills the live ones whose kill was
    /// decided before the crash, and ends the `found` processes (those carrying this state
    /// directory's launch environment) of a launch no committed state knows: started in a turn
    /// whose commit never happened, their requests are still pending and will be launched again.
    /// Each such kill is recorded before it is sent, like any other. The other processes stay
    /// supervised (watched until they exit); a leftover child of a recorded launch is left alone.
    ///
    /// `lastCommitAt` is the time of the last scheduler's last commit (its heartbeat): a launch
    /// that commit did not record started after it, so a marked process that started well before
    /// it (a child left by a recorded launch whose leader has exited) is left alone.
    public mutating func takeOverProcesses(found: [MarkedProcess], now: Date, lastCommitAt: Date? = nil,
                                           isAlive: (ProcessLedger.Entry) -> Bool) -> [SchedulerEffect] {
        let known = Set(processes.values.map(\.launchID)).union(tasks.values.map(\.launchID))
        var actions: [SchedulerEffect] = []
        for entry in processes.values.sorted(by: { $0.pid < $1.pid }) {
            guard isAlive(entry) else {
                removeProcess(entry.pid)
                continue
            }
            guard let decided = entry.killDecidedAt else { continue }
            record(Event(time: now, type: .killed, app: entry.app, pid: entry.pid, reason: "killAfterRestart",
                         message: "\(entry.app): killed pid \(entry.pid): its kill was decided at \(JSONFormat.string(from: decided)) and the scheduler stopped before it was sent"))
            actions.append(.kill(pid: entry.pid, processGroup: entry.processGroup, tasks: []))
        }
        let supervised = watchedPIDs
        // Start times are whole seconds (the boot time is): a second and a half of slack.
        let uncommittedSince = lastCommitAt?.addingTimeInterval(-1.5)
        for process in found.sorted(by: { $0.pid < $1.pid })
        where !known.contains(process.launchID) && !supervised.contains(process.pid)
            && !(uncommittedSince.map { since in process.startedAt.map { $0 < since } ?? false } ?? false) {
            let app = process.app ?? Self.unknownApp
            let group = process.leadsGroup ? process.pid : nil
            setProcess(ProcessLedger.Entry(pid: process.pid, processStartTicks: process.processStartTicks, processGroup: group,
                                           app: app, launchID: process.launchID, launchedAt: now, killDecidedAt: now))
            record(Event(time: now, type: .killed, app: process.app, pid: process.pid, reason: "unsupervised",
                         message: "\(app): killed pid \(process.pid) of launch \(process.launchID): the scheduler stopped before it recorded the launch, so its requests launch again"))
            actions.append(.kill(pid: process.pid, processGroup: group, tasks: []))
        }
        return actions
    }

    /// Names the app of a marked process whose environment names none that is valid.
    static let unknownApp = try! Identifier(validating: "unknown")
}
