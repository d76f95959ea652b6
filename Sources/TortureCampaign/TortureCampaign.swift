import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The standing `kill -9` campaign (issue 11): a real `bgtaskd` on a private state folder with two
/// test apps, random commands written into the inbox (some while no scheduler runs), and the
/// scheduler killed with SIGKILL at a random moment of every round and started again. After each
/// restart, once the scheduler has applied everything waiting, and again at the end, it checks
/// that nothing acknowledged is lost or doubled, that no process of the state folder runs
/// unsupervised, and that nothing hung or crashed.
///
/// Seeded: the same seed draws the same rounds, commands and kill moments (what the processes make
/// of them still depends on timing, so a finding is a lead to re-run, not an exact replay).
public struct TortureCampaign {
    /// How long a `bgtaskd` may take to take its lock, apply what waits, or a `bgctl` to answer.
    public static let bound: TimeInterval = 30
    /// How long a process must stay unsupervised (the same pid and start time) to count.
    public static let unsupervisedGrace: TimeInterval = 5

    public var rounds: Int
    public var seed: UInt64
    /// The folder holding `bgtaskd` and `bgctl`.
    public var binaries: String
    /// Where the campaign's folder is made.
    public var parent: String
    /// Keep the folder (state, logs) at the end instead of removing it.
    public var keep = false
    /// Seconds of commands before each kill: drawn uniformly from this range.
    public var roundSeconds: ClosedRange<Double> = 0.3...2.5
    /// Called with a line of progress now and then, and with each finding as it is made.
    public var progress: (String) -> Void = { _ in }
    /// Called with the campaign's folder as soon as it exists, so that a caller cut short (Ctrl-C)
    /// can end its processes (``endProcesses(folder:)``) and remove it.
    public var folderCreated: (String) -> Void = { _ in }

    public init(rounds: Int, seed: UInt64, binaries: String, parent: String) {
        self.rounds = rounds
        self.seed = seed
        self.binaries = binaries
        self.parent = parent
    }

    /// Runs every round and the final audit; every process it or the scheduler started is ended
    /// before it returns. Throws only when it cannot set itself up.
    public func run() throws(TortureError) -> TortureReport {
        let root = try Self.makeFolder(parent: parent)
        folderCreated(root)
        let state = "\(root)/state", config = "\(root)/config"
        guard mkdir(state, 0o700) == 0, mkdir(config, 0o755) == 0, mkdir("\(config)/apps", 0o755) == 0 else {
            throw TortureError("cannot create folders in \(root): \(String(cString: strerror(errno)))")
        }
        let paths = StatePaths(root: state)
        let apps = try TortureApps(root: root, config: config, binaries: binaries)
        let daemon = TortureDaemon(executable: "\(binaries)/bgtaskd", paths: paths, config: config, log: "\(root)/bgtaskd.log")
        var run = TortureRun(campaign: self, paths: paths, apps: apps, daemon: daemon, root: root)
        defer {
            daemon.stop()
            TortureProcesses.killAll(state: state)
            if !keep { try? FileManager.default.removeItem(atPath: root) }
        }
        return try run.go()
    }

    /// Ends, with SIGKILL, the scheduler of a campaign's folder and every process of its apps:
    /// what a run cut short leaves behind.
    public static func endProcesses(folder: String) {
        let paths = StatePaths(root: "\(folder)/state")
        if let scheduler = StateLock.holder(paths) { kill(scheduler, SIGKILL) }
        TortureProcesses.killAll(state: paths.root)
    }

    private static func makeFolder(parent: String) throws(TortureError) -> String {
        var template = Array("\(parent)/bgtorture-XXXXXX".utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw TortureError("cannot create a folder in \(parent): \(String(cString: strerror(errno)))")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// When in a round the scheduler is killed.
private enum KillMoment: CaseIterable {
    /// At the end of the round's commands: anywhere in the pause after the last one.
    case uniform
    /// 0 to 40 ms after a command that launches an app: mid-turn, between a launch and its
    /// commit, or mid-commit.
    case afterLaunchCommand
    /// Around the next budget or kill deadline of a running task: between a kill decision (or an
    /// expiry) and the signal, or its commit.
    case atDeadline
}

/// One run of the campaign: its random streams, the commands it issued and what it found.
private struct TortureRun {
    let campaign: TortureCampaign
    let paths: StatePaths
    let apps: TortureApps
    let daemon: TortureDaemon
    let root: String
    var report: TortureReport
    var issued: [IssuedCommand] = []
    var plan: SplitMix64
    var choices: SplitMix64
    /// Processes seen unsupervised at the last check, with when; counted if still so later.
    var suspects: [ProcessName: Date] = [:]
    var confirmed: Set<ProcessName> = []
    var round = 0

    init(campaign: TortureCampaign, paths: StatePaths, apps: TortureApps, daemon: TortureDaemon, root: String) {
        self.campaign = campaign
        self.paths = paths
        self.apps = apps
        self.daemon = daemon
        self.root = root
        report = TortureReport(seed: campaign.seed)
        report.folder = root
        var generator = SplitMix64(seed: campaign.seed)
        plan = generator.split()
        choices = generator.split()
    }

    mutating func go() throws(TortureError) -> TortureReport {
        try startDaemon()
        // Conditions that let every launch happen; later commands change them now and then.
        try issue(.setConditions(ConditionOverrides(externalPower: true, network: true, idle: true, lowPower: false)))
        for number in 0..<campaign.rounds {
            round = number
            let active = Double.random(in: campaign.roundSeconds, using: &plan)
            let downtime = Double.random(in: 0.05...0.8, using: &plan)
            let queued = Int.random(in: 0...3, using: &plan)
            let moment = KillMoment.allCases[Int.random(in: 0..<KillMoment.allCases.count, using: &plan)]
            let jitter = Double.random(in: 0...1, using: &plan)
            try issueCommands(for: active)
            try waitForKill(moment, jitter: jitter)
            daemon.killHard()
            report.restarts += 1
            let downUntil = Date().addingTimeInterval(downtime)
            for _ in 0..<queued { try issue(randomAction()) }
            if downUntil > Date() { usleep(useconds_t(downUntil.timeIntervalSinceNow * 1_000_000)) }
            try startDaemon()
            try settle()
            checkControl()
            checkSupervision()
            report.rounds += 1
            campaign.progress("round \(number + 1)/\(campaign.rounds): \(report.commands) commands, \(report.findings.count) findings")
        }
        round = campaign.rounds
        try settle()
        quiesce()
        checkSupervision(waitingForSuspects: true)
        let audit = TortureAudit(paths: paths, apps: apps, issued: issued, round: round).findings()
        for finding in audit.findings { found(finding.kind, finding.detail) }
        let recorded = Set(EventLog(paths: paths).recent(limit: .max).events
            .filter { $0.type == .launched || $0.type == .adopted }.compactMap(\.pid))
        for line in audit.appLog {
            switch line {
            case .start(let process, _):
                report.appLaunches += 1
                if !recorded.contains(process.pid) { report.unrecordedLaunches += 1 }
            case .complete(_, _, let status, _):
                report.appCompletions += 1
                if status == 0 { report.appCompletionsAcknowledged += 1 }
            case .expired, .unrecorded: break
            }
        }
        daemon.stop()
        for crash in daemon.crashes { found(.crash, crash) }
        return report
    }

    // MARK: - The scheduler

    private mutating func startDaemon() throws(TortureError) {
        // A scheduler that hangs or dies while starting is a finding; the campaign tries again,
        // since without a scheduler it can check nothing.
        for _ in 0..<3 {
            if try daemon.start(timeout: TortureCampaign.bound) {
                if daemon.isUp { return }
                campaign.progress("! bgtaskd ended while starting; starting it again")
            } else {
                found(.hang, "bgtaskd did not take its lock within \(Int(TortureCampaign.bound)) s of starting")
            }
        }
        throw TortureError("bgtaskd does not start (see \(root)/bgtaskd.log)")
    }

    /// Restarts a scheduler that ended by itself (its exit is kept as a crash by the daemon).
    private mutating func reviveIfNeeded() throws(TortureError) {
        if daemon.noticeUnexpectedExit() {
            campaign.progress("! bgtaskd ended by itself; starting it again")
            try startDaemon()
        }
    }

    /// Waits until the scheduler has applied everything in the inbox and answered every command.
    private mutating func settle() throws(TortureError) {
        var deadline = Date().addingTimeInterval(TortureCampaign.bound)
        while true {
            let waiting = (try? StateFiles.names(in: paths.inboxNew).filter { $0.hasSuffix(".json") }.count) ?? 0
            let unanswered = issued.filter { !StateFiles.exists(paths.outcome($0.command.id)) }.count
            if waiting == 0 && unanswered == 0 { return }
            if daemon.noticeUnexpectedExit() {
                campaign.progress("! bgtaskd ended by itself; starting it again")
                try startDaemon()
                deadline = Date().addingTimeInterval(TortureCampaign.bound)
            }
            if Date() >= deadline {
                found(.hang, "bgtaskd left \(waiting) command(s) in the inbox and \(unanswered) unanswered "
                      + "\(Int(TortureCampaign.bound)) s after starting")
                return
            }
            usleep(10_000)
        }
    }

    /// Waits (within the bound) until no task is recorded and no supervised app process runs, so
    /// the app log is complete before the audit: launches end within their budget and grace.
    /// Unsupervised processes are left to ``checkSupervision(waitingForSuspects:)``.
    private mutating func quiesce() {
        let deadline = Date().addingTimeInterval(TortureCampaign.bound)
        while Date() < deadline {
            let unsupervised = TortureProcesses.unsupervised(state: paths.root)
            let supervised = TortureProcesses.marked(state: paths.root).filter { !unsupervised.contains($0.name) }
            if supervised.isEmpty && StateSnapshot.load(paths).tasks.isEmpty { return }
            usleep(50_000)
        }
        campaign.progress("note: app processes or tasks were still there \(Int(TortureCampaign.bound)) s after the last round")
    }

    /// `bgctl status` answers within the bound.
    private mutating func checkControl() {
        var environment = ProcessInfo.processInfo.environment
        for key in ["BGTASK_STATE_DIR", "BGTASK_CONFIG_DIR", "BGTASK_APP_ID"] { environment[key] = nil }
        guard let program = try? SpawnedProgram("\(campaign.binaries)/bgctl", ["status", "--state", paths.root, "--config", "\(root)/config"],
                                                environment: environment, output: "\(root)/bgctl.log") else {
            found(.hang, "bgctl status could not be started")
            return
        }
        if !program.wait(timeout: TortureCampaign.bound) {
            program.killAndReap()
            found(.hang, "bgctl status did not answer within \(Int(TortureCampaign.bound)) s")
        }
    }

    /// Processes unsupervised now become suspects; a suspect still unsupervised (the same
    /// process) at least ``TortureCampaign/unsupervisedGrace`` seconds later is a finding.
    private mutating func checkSupervision(waitingForSuspects: Bool = false) {
        var now = TortureProcesses.unsupervised(state: paths.root)
        if waitingForSuspects && !now.isEmpty {
            usleep(useconds_t(TortureCampaign.unsupervisedGrace * 1_000_000))
            now = now.intersection(TortureProcesses.unsupervised(state: paths.root))
            for process in now where !confirmed.contains(process) {
                confirmed.insert(process)
                found(.unsupervised, "\(process) (\(Self.commandLine(process.pid))) still runs, named by no task record or attachment")
            }
            return
        }
        let moment = Date()
        for process in now {
            if let since = suspects[process], moment.timeIntervalSince(since) >= TortureCampaign.unsupervisedGrace, !confirmed.contains(process) {
                confirmed.insert(process)
                found(.unsupervised, "\(process) (\(Self.commandLine(process.pid))) runs, named by no task record or attachment, "
                      + "for \(Int(moment.timeIntervalSince(since))) s or more")
            }
        }
        suspects = suspects.filter { now.contains($0.key) }
        for process in now where suspects[process] == nil { suspects[process] = moment }
    }

    private static func commandLine(_ pid: Int32) -> String {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return "?" }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }.joined(separator: " ")
    }

    // MARK: - Kill moments

    /// Waits for the round's kill moment. An idle scheduler is killed harmlessly, so besides
    /// moments uniform over the round, two kinds aim at the short windows where it is busy.
    private mutating func waitForKill(_ moment: KillMoment, jitter: Double) throws(TortureError) {
        switch moment {
        case .uniform:
            return
        case .afterLaunchCommand:
            try issueLaunch()
            usleep(useconds_t(jitter * 40_000))
        case .atDeadline:
            // The next budget or kill deadline of a running task (an expiry, or the kill of an
            // overrun), give or take a few milliseconds; with none soon, as after a command.
            let now = Date()
            let soon = StateSnapshot.load(paths).tasks.flatMap { [$0.deadline, $0.killDeadline].compactMap { $0 } }
                .filter { $0 > now && $0.timeIntervalSince(now) < 3 }.min()
            guard let soon else {
                try issueLaunch()
                usleep(useconds_t(jitter * 40_000))
                return
            }
            let wait = soon.timeIntervalSince(now) - 0.01 + jitter * 0.04
            if wait > 0 { usleep(useconds_t(wait * 1_000_000)) }
        }
    }

    /// A command that makes the scheduler launch now: `simulate-launch` of a pending request,
    /// else a submit that is due at once.
    private mutating func issueLaunch() throws(TortureError) {
        let pending = StateSnapshot.load(paths).requests.sorted { $0.key < $1.key }
        if !pending.isEmpty {
            let request = pending[Int.random(in: 0..<pending.count, using: &choices)]
            try issue(.simulateLaunch(identifier: request.identifier, app: request.app))
        } else {
            let app = apps.apps[Int.random(in: 0..<apps.apps.count, using: &choices)]
            let task = app.tasks[Int.random(in: 0..<app.tasks.count, using: &choices)]
            try issue(.submit(SubmitRequest(app: app.id, identifier: task.identifier, kind: task.kind)))
        }
    }

    // MARK: - Commands

    /// Issues random commands at random intervals for `seconds`.
    private mutating func issueCommands(for seconds: Double) throws(TortureError) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            try reviveIfNeeded()
            try issue(randomAction())
            let pause = min(Double.random(in: 0.01...0.25, using: &plan), max(0, end.timeIntervalSinceNow))
            usleep(useconds_t(pause * 1_000_000))
        }
    }

    /// Makes a command durable in the inbox, as any writer may, without waiting for its outcome.
    private mutating func issue(_ action: CommandAction) throws(TortureError) {
        let whileDown = StateLock.holder(paths) == nil
        let command = Command(issuedAt: Date(), issuerPID: getpid(), action: action)
        do {
            try Inbox(paths: paths).enqueue(command)
        } catch {
            throw TortureError("cannot write a command into \(paths.inboxNew): \(error)")
        }
        issued.append(IssuedCommand(command: command, round: round, whileDown: whileDown))
        report.commands += 1
        if whileDown { report.commandsWhileDown += 1 }
    }

    private mutating func randomAction() -> CommandAction {
        let app = apps.apps[Int.random(in: 0..<apps.apps.count, using: &choices)]
        let task = app.tasks[Int.random(in: 0..<app.tasks.count, using: &choices)]
        // A task that runs now, when there is one, for completions and expirations.
        let running = StateSnapshot.load(paths).tasks.sorted { $0.key < $1.key }
        let target = running.isEmpty ? nil : running[Int.random(in: 0..<running.count, using: &choices)]
        switch Int.random(in: 0..<12, using: &choices) {
        case 0..<5:
            let later = Bool.random(using: &choices) && Bool.random(using: &choices)
            let processing = task.kind == .processing
            return .submit(SubmitRequest(
                app: app.id, identifier: task.identifier, kind: task.kind,
                earliestBeginDate: later ? Date().addingTimeInterval(Double.random(in: 0...1.5, using: &choices)) : nil,
                requiresNetworkConnectivity: processing && Int.random(in: 0..<5, using: &choices) == 0,
                requiresExternalPower: processing && Int.random(in: 0..<5, using: &choices) == 0))
        case 5:
            return .cancel(app: app.id, identifier: task.identifier)
        case 6, 7:
            return .simulateLaunch(identifier: task.identifier, app: app.id)
        case 8:
            return .simulateExpiration(identifier: target?.identifier ?? task.identifier, app: target?.app ?? app.id)
        case 9, 10:
            return .complete(app: target?.app ?? app.id, identifier: target?.identifier ?? task.identifier, success: Bool.random(using: &choices))
        default:
            return .setConditions(ConditionOverrides(
                externalPower: Int.random(in: 0..<10, using: &choices) < 7, network: Int.random(in: 0..<10, using: &choices) < 7,
                idle: Int.random(in: 0..<10, using: &choices) < 9, lowPower: Int.random(in: 0..<10, using: &choices) == 0))
        }
    }

    private mutating func found(_ kind: TortureReport.Kind, _ detail: String) {
        let finding = TortureReport.Finding(kind: kind, round: round, detail: detail)
        report.findings.append(finding)
        campaign.progress("! \(finding)")
    }
}
