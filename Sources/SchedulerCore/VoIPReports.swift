import FoundationEssentials
import TaskState

/// What a VoIP push obliges the app to do: report an incoming call (CallKit's
/// `reportNewIncomingCall`) within `voipReportSeconds`, or be killed with reason
/// `voipNotReported`; `voipStrikes` such failures in a row and its VoIP pushes are dropped until
/// a person uses the app. See `docs/scheduling.md#voip-pushes`.
extension SchedulerState {
    /// The `reportCall` command: checked, refused when the call was already reported, else
    /// recorded with an event; it settles the oldest report the app owes (one push's) and clears
    /// its strikes.
    mutating func reportCall(_ report: CallReport, command: String?, now: Date) -> Result<String, SchedulerError> {
        let appID = report.app
        guard catalog.manifests[appID] != nil else {
            return .failure(.unknownApp("app \(appID) has no usable manifest"))
        }
        if let problem = report.problem { return .failure(.invalidCommand(problem)) }
        let uuid = report.uuid.uppercased()
        var appRecord = app(appID)
        var voip = appRecord.voip ?? VoIPState()
        if voip.recentCalls?.contains(uuid) == true {
            return .failure(.alreadyReported("call \(uuid) was already reported by \(appID); a call is reported once"))
        }
        var debts = voip.debts
        let settled = debts.isEmpty ? nil : debts.removeFirst()
        voip.recentCalls = Array(((voip.recentCalls ?? []) + [uuid]).suffix(VoIPState.rememberedCalls))
        voip.lastReport = now
        voip.lastNotifier = report.notifier ?? voip.lastNotifier
        voip.strikes = 0
        voip.setDebts(debts)
        appRecord.voip = voip
        setApp(appRecord)
        let answered = settled.map { debt in ", in time for its VoIP push" + (debt.push.map { " \($0)" } ?? "") } ?? ""
        let shown = report.notifier.map { " (shown with \($0))" } ?? ""
        self.record(Event(time: now, type: .callReported, app: appID, command: command, reason: report.notifier,
                          message: "\(appID): reported incoming call \(uuid) from \(report.handle)\(shown)\(answered)"))
        return .success("reported call \(uuid) from \(report.handle)\(shown)")
    }

    /// The reports overdue at `now`, each one push's: each is a strike, its process (the one that
    /// push went to, while the scheduler still watches it) is killed through the normal kill path
    /// with reason `voipNotReported`, and at `voipStrikes` the app's VoIP pushes are blocked.
    mutating func enforceVoIPReports(at now: Date) -> [SchedulerEffect] {
        var effects: [SchedulerEffect] = []
        for record in appsOwingReports.sorted().compactMap({ apps[$0] }) {
            guard let debts = record.voip?.debts, debts.contains(where: { $0.dueBy <= now }) else { continue }
            for debt in debts where debt.dueBy <= now {
                effects += missedReport(debt, app: record.id, now: now)
            }
        }
        return effects
    }

    /// One overdue report: the debt leaves the record as a strike, and its process is killed
    /// unless it is gone or already being killed.
    private mutating func missedReport(_ debt: VoIPDebt, app appID: Identifier, now: Date) -> [SchedulerEffect] {
        var appRecord = app(appID)
        var voip = appRecord.voip ?? VoIPState()
        var debts = voip.debts
        if let index = debts.firstIndex(of: debt) { debts.remove(at: index) }
        voip.setDebts(debts)
        voip.strikes = min(voip.strikes, 999) + 1
        let blocks = voip.strikes >= settings.voipStrikes && voip.blockedSince == nil
        if blocks { voip.blockedSince = now }
        appRecord.voip = voip
        setApp(appRecord)
        let pid = debt.pid
        let dying = pid.map { processes[$0]?.killDecidedAt != nil } ?? false
        let killed = dying ? nil : pid.flatMap { killForMissingReport(app: appID, pid: $0, now: now) }
        let what = killed != nil ? "pid \(pid ?? 0) killed" : dying ? "pid \(pid ?? 0) is already being killed" : "its process had already ended"
        let which = debt.push.map { " \($0)" } ?? ""
        self.record(Event(time: now, type: .voipStrike, app: appID, identifier: debt.push, pid: pid, reason: "voipNotReported",
                          message: "\(appID): no call reported within \(Self.seconds(settings.voipReportSeconds)) of its VoIP push\(which); \(what) (\(voip.strikes) of \(settings.voipStrikes) in a row)"))
        if blocks {
            self.record(Event(time: now, type: .voipBlocked, app: appID, reason: "voipStrikes",
                              message: "\(appID): VoIP pushes dropped from now on: \(voip.strikes) failures to report a call in a row; a person using the app lifts this"))
        }
        return killed.map { [$0] } ?? []
    }

    /// Kills `pid` for an unreported call when the scheduler still watches it (a task's process,
    /// an attached one, or one it launched): its tasks end with `killed` events, and the kill is
    /// recorded before it is sent, as every kill is.
    private mutating func killForMissingReport(app appID: Identifier, pid: Int32, now: Date) -> SchedulerEffect? {
        guard watchedPIDs.contains(pid) else { return nil }
        let sharing = tasks.values.filter { $0.pid == pid }.sorted { $0.key < $1.key }
        for victim in sharing {
            removeTask(victim.key)
            record(Event(time: now, type: .killed, app: victim.app, identifier: victim.identifier, kind: victim.kind, pid: pid,
                         reason: "voipNotReported", message: "\(victim.app): killed pid \(pid): no call reported for its VoIP push"))
        }
        if sharing.isEmpty {
            record(Event(time: now, type: .killed, app: appID, pid: pid, reason: "voipNotReported",
                         message: "\(appID): killed pid \(pid): no call reported for its VoIP push"))
        }
        let group = sharing.lazy.compactMap(\.processGroup).first ?? processes[pid]?.processGroup
            ?? apps[appID]?.attachedProcess.flatMap { $0.pid == pid ? $0.processGroup : nil }
        // Recorded before it is sent, so a scheduler that stops in between kills it at its next start.
        let attached = apps[appID]?.attachedProcess.flatMap { $0.pid == pid ? $0 : nil }
        var entry = processes[pid] ?? ProcessLedger.Entry(
            pid: pid, processStartTicks: sharing.first?.processStartTicks ?? attached?.processStartTicks, processGroup: group,
            app: appID, launchID: sharing.first?.launchID ?? "voip-\(pid)", launchedAt: sharing.first?.startedAt ?? attached?.attachedAt ?? now)
        entry.killDecidedAt = entry.killDecidedAt ?? now
        setProcess(entry)
        var appRecord = app(appID)
        appRecord.killCount = SafeNumber.sum(appRecord.killCount, 1)
        appRecord.activity = appRecord.activity ?? AppActivity()
        appRecord.activity?.count(.kill, at: now)
        setApp(appRecord)
        return .kill(pid: pid, processGroup: group, tasks: sharing.map(\.key))
    }

    /// A person used the app (`appUsed` with a use after its VoIP trouble began): strikes are
    /// cleared and blocked VoIP pushes flow again.
    mutating func noteUseForVoIP(app appID: Identifier, uses: [Date], now: Date) {
        guard var appRecord = apps[appID], var voip = appRecord.voip, voip.strikes > 0 || voip.isBlocked else { return }
        let since = voip.blockedSince ?? voip.lastDelivery ?? .distantPast
        guard let use = uses.filter({ $0 >= since }).max() else { return }
        let wasBlocked = voip.isBlocked
        voip.strikes = 0
        voip.blockedSince = nil
        appRecord.voip = voip
        setApp(appRecord)
        if wasBlocked {
            self.record(Event(time: now, type: .voipUnblocked, app: appID, reason: "appUsed",
                              message: "\(appID): VoIP pushes delivered again: a person used the app at \(JSONFormat.string(from: use))"))
        }
    }

    /// The earliest call report owed, for the scheduler's timer.
    func nextVoIPReportDeadline() -> Date? {
        appsOwingReports.compactMap { apps[$0]?.voip?.debts }.joined().map(\.dueBy).min()
    }
}
