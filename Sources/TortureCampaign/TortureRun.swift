import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// One run of the campaign: its random streams, the commands it issued and what it found.
struct TortureRun {
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
        let recordings = EventLog(paths: paths).recent(limit: .max).events.filter { $0.type == .launched || $0.type == .adopted }
        for line in audit.appLog {
            switch line {
            case .start(let process, _):
                report.appLaunches += 1
                if !recordings.contains(where: process.isNamed(by:)) { report.unrecordedLaunches += 1 }
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

    mutating func startDaemon() throws(TortureError) {
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
    mutating func reviveIfNeeded() throws(TortureError) {
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

    mutating func found(_ kind: TortureReport.Kind, _ detail: String) {
        let finding = TortureReport.Finding(kind: kind, round: round, detail: detail)
        report.findings.append(finding)
        campaign.progress("! \(finding)")
    }
}
