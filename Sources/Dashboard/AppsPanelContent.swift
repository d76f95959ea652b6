import FoundationEssentials
import TaskState

/// The apps panel's columns and cells.
extension PanelContent {
    func appColumns(width: Int) -> [Column] {
        let wide = width >= 120
        return [.flexible("APP", minimum: 10, weight: 2), .fixed("ON", 3), .flexible("THROTTLE", minimum: 12, weight: 3),
                .fixed("PID", 7), .flexible("LAST LAUNCH", minimum: 13, weight: 2),
                .fixed(wide ? "24H RUN/EXP/KILL" : "24H R/E/K", wide ? 16 : 9), .fixed(wide ? "PUSH/H" : "PUSH", wide ? 6 : 5),
                .flexible("PROBLEMS", minimum: 11, weight: 3)]
    }

    func appCells(_ row: DashboardSnapshot.AppRow, widths: [Int]) -> [TableCell] {
        let now = snapshot.now
        let record = row.record
        let enabled = record.enabled ? TableCell("yes") : TableCell("no", style: palette.error)
        var throttle = TableCell("-")
        if let until = record.throttledUntil, until > now {
            throttle = TableCell(throttleText(row, left: until.timeIntervalSince(now), width: widths.count > 2 ? widths[2] : 12),
                                 style: palette.error)
        }
        let pid = record.attachedProcess.map { TableCell("\($0.pid)") } ?? TableCell("-")
        let launchWidth = widths.count > 4 ? widths[4] : 13
        let launch = record.lastLaunchAt.map { date in
            TableCell(launchTime(date) + (record.lastLaunchReason.map { " " + reasonLabel($0, room: launchWidth - 6) } ?? ""))
        } ?? TableCell("never", style: palette.inactive)
        let day = row.lastDay
        let counts = TableCell("\(day.launches)/\(day.expiries)/\(day.kills)", style: day.kills > 0 ? palette.misc : nil)
        var pushes = row.pushBudgetPerHour.map { budget in
            TableCell("\(row.pushesThisHour ?? 0)/\(budget)", style: (row.pushesThisHour ?? 0) >= budget ? palette.misc : nil)
        } ?? TableCell("-")
        // VoIP trouble outranks the budget: it is what gets an app killed or cut off.
        if let marker = VoIPText.marker(record.voip) {
            pushes = TableCell(marker, style: record.voip?.isBlocked == true ? palette.error : palette.misc)
        }
        var problems = row.problemText.map { TableCell($0, style: palette.error) } ?? TableCell("-")
        // The CPU monitor's last stop is a problem of the app's code for a day after it.
        if row.problemText == nil, let stopped = record.lastCpuLimitAt, now.timeIntervalSince(stopped) < 86_400 {
            let limit = (record.lastCpuLimitReason ?? "cpuLimit").prefix { $0 != ":" }
            problems = TableCell("\(limit) \(DurationText.since(stopped, from: now))", style: palette.misc)
        }
        return [TableCell(row.app.rawValue, keepsTail: true), enabled, throttle, pid, launch, counts, pushes, problems]
    }

    /// `45s: …refresh overran`, or where narrow `45s …refresh`: the time left, then the overrun.
    private func throttleText(_ row: DashboardSnapshot.AppRow, left: TimeInterval, width: Int) -> String {
        let time = DurationText.compact(left)
        guard let cause = row.record.throttleCause else { return time + " level \(row.record.throttleLevel)" }
        let full = "\(time): " + IdentifierText.withoutPrefix(cause, app: row.app.rawValue, glyphs: glyphs)
        if full.count <= width { return full }
        // The cause is "<identifier> overran" or "<identifier> died of <signal>": keep the identifier.
        let identifier = cause.split(separator: " ").first.map(String.init) ?? cause
        return "\(time) " + IdentifierText.withoutPrefix(identifier, app: row.app.rawValue, glyphs: glyphs)
    }

    /// A clock time (UTC, like the header's) within the last day; older, how many days ago. Not
    /// "5m ago": the screen would have to tick to age it.
    private func launchTime(_ date: Date) -> String {
        let age = snapshot.now.timeIntervalSince(date)
        return age < 86_400 ? TextFormat.clock(date, seconds: false) : "\(SafeNumber.int64(age / 86_400, .towardZero))d ago"
    }

    /// A launch reason in `room` cells: its short form where the whole does not fit.
    private func reasonLabel(_ reason: String, room: Int) -> String {
        if reason.count <= room { return reason }
        let short = ["appRefresh": "refresh", "processing": "process", "urlSession": "session", "remoteNotification": "push",
                     "simulated": "sim", "finishing": "finish", "voipPush": "voip"]
        return short[reason] ?? reason
    }
}
