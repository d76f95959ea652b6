import FoundationEssentials
import TaskState

/// The detail view of an app: what the scheduler knows of it, and its requests, tasks and
/// transfers; the detail overlay adds its recent events, then its week of use (last: on a short
/// terminal the recent events matter more).
enum AppDetail {
    /// How many requests, tasks or transfers are listed before "+N more".
    static let listed = 4

    static func lines(_ row: DashboardSnapshot.AppRow, snapshot: DashboardSnapshot, glyphs: Glyphs,
                      date: (Date?) -> String) -> [(String, String)] {
        let record = row.record
        let now = snapshot.now
        var lines: [(String, String)] = [("app", row.app.rawValue)]
        lines.append(("background work", record.enabled ? "on (d switches it off)" : "off: nothing is launched (d switches it on)"))
        if let manifest = row.manifest {
            lines.append(("executable", manifest.executable))
            let identifiers = manifest.permittedIdentifiers.map(\.rawValue).joined(separator: ", ")
            lines.append(("modes", manifest.backgroundModes.map(\.rawValue).joined(separator: ", ")
                          + (identifiers.isEmpty ? "" : ": " + identifiers)))
        }
        for problem in row.manifestProblems { lines.append(("manifest problem", problem)) }
        if row.manifest == nil && row.manifestProblems.isEmpty { lines.append(("manifest", "none: its requests wait on `no manifest`")) }
        if let until = record.throttledUntil, until > now {
            lines.append(("throttled until", date(until) + ", level \(record.throttleLevel)" + (record.throttleCause.map { ", after \($0)" } ?? "")))
        } else {
            lines.append(("throttled", record.throttleLevel > 0 ? "no (level \(record.throttleLevel) until a clean run)" : "no"))
        }
        if let attached = record.attachedProcess {
            lines.append(("attached", "pid \(attached.pid) since \(TextFormat.clock(attached.attachedAt)), handles "
                          + attached.identifiers.map(\.rawValue).joined(separator: ", ")))
        }
        lines.append(("last launch", record.lastLaunchAt.map { date($0) + (record.lastLaunchReason.map { ", \($0)" } ?? "") } ?? "never"))
        let day = row.lastDay
        lines.append(("last 24 h", "\(count(day.launches, "launch", "launches")), \(count(day.expiries, "expiry", "expiries")), "
                      + "\(count(day.kills, "kill", "kills")); in all \(count(record.launchCount, "launch", "launches")), \(count(record.killCount, "kill", "kills"))"))
        if let budget = row.pushBudgetPerHour {
            lines.append(("pushes this hour", "\(row.pushesThisHour ?? 0) of \(budget)" + (record.lastPushResult.map { ", last answer \($0.rawValue)" } ?? "")))
        }
        if let stopped = record.lastCpuLimitAt {
            lines.append(("cpu monitor", "expired a task \(DurationText.since(stopped, from: now))"
                          + (record.lastCpuLimitReason.map { ": \($0)" } ?? "")))
        }
        if let voip = record.voip { lines.append(("voip pushes", VoIPText.detail(voip, date: date))) }
        let requests = snapshot.pending.filter { $0.request.app == row.app }
        let tasks = snapshot.tasks.filter { $0.app == row.app }
        let transfers = snapshot.transfers.filter { $0.app == row.app }
        lines.append(("work", "\(count(requests.count, "request", "requests")), \(count(tasks.count, "task", "tasks")), "
                      + count(transfers.count, "transfer", "transfers")))
        list("  request", requests.map { pending in
            (pending.request.identifier.rawValue, pending.blockers(under: snapshot.rowConditions).isEmpty && pending.pushBlockers.isEmpty
                ? "ready" : pending.waitingLabels(under: snapshot.rowConditions).joined(separator: ", "))
        }, app: row.app, glyphs: glyphs, into: &lines)
        list("  task", tasks.map { task in
            (task.identifier.rawValue, "pid \(task.pid), \(task.state.rawValue), \(DurationText.compact(task.remaining(at: now))) left")
        }, app: row.app, glyphs: glyphs, into: &lines)
        list("  transfer", transfers.map { transfer in
            (transfer.identifier.rawValue, "\(transfer.state.rawValue), \(TextFormat.bytes(transfer.bytesTransferred))"
                + (transfer.bytesExpected.map { " of " + TextFormat.bytes($0) } ?? ""))
        }, app: row.app, glyphs: glyphs, into: &lines)
        return lines
    }

    /// "1 kill", "3 kills", "no kills".
    private static func count(_ number: Int, _ one: String, _ many: String) -> String {
        number == 0 ? "no \(many)" : number == 1 ? "1 \(one)" : "\(number) \(many)"
    }

    /// One line per item: its kind, the identifier without the app's prefix, what it is doing.
    private static func list(_ label: String, _ items: [(String, String)], app: Identifier, glyphs: Glyphs,
                             into lines: inout [(String, String)]) {
        for (name, text) in items.prefix(listed) {
            lines.append((label, IdentifierText.withoutPrefix(name, app: app.rawValue, glyphs: glyphs) + "  " + text))
        }
        if items.count > listed { lines.append(("", "+\(items.count - listed) more")) }
    }
}
