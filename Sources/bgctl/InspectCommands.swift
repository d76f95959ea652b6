import ArgumentParser
import FoundationEssentials
import SchedulerCore
import TaskState

/// Loads settings for read-only commands; a broken settings file is reported, defaults used.
func readSettings(_ locations: LocationOptions) -> SchedulerSettings {
    do {
        return try SchedulerSettings.load(configDirectory: locations.configDirectory)
    } catch {
        printError("warning: bad settings file \(error); using defaults")
        return SchedulerSettings()
    }
}

/// Says on stderr that some state files could not be read, in one line.
func reportUnreadable(_ snapshot: StateSnapshot) {
    guard let first = snapshot.unreadable.first else { return }
    let more = snapshot.unreadable.count > 1 ? " (and \(snapshot.unreadable.count - 1) more)" : ""
    printError("warning: unreadable state file \(first.path): \(first.reason)\(more); bgtaskd quarantines these")
}

struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Pending requests with their blockers, running tasks with their remaining time, transfers.")

    @OptionGroup var locations: LocationOptions
    @Flag(help: "Print the documented JSON schema instead of tables.") var json = false

    func run() throws {
        let now = Date()
        let snapshot = StateSnapshot.load(locations.paths)
        reportUnreadable(snapshot)
        let listing = Listing(snapshot: snapshot, settings: readSettings(locations),
                              catalog: ManifestCatalog.load(from: locations.appsDirectory), now: now)
        if json {
            try printJSON(listing)
            return
        }
        var pending = TextTable("APP", "IDENTIFIER", "KIND", "EARLIEST", "REQUIRES", "BLOCKERS")
        for request in listing.requests {
            let requires = [request.requiresExternalPower ? "power" : nil, request.requiresNetworkConnectivity ? "network" : nil]
                .compactMap { $0 }.joined(separator: ",")
            var blockers = request.blockers.isEmpty ? "none (launching)" : request.blockers.map(\.rawValue).joined(separator: ",")
            if let planned = request.plannedLaunchAt {
                let use = request.predictedUseAt.map { "use ~\(TimeOfDay.text($0, zone: .system, now: now)), " } ?? ""
                blockers += " (\(use)refresh \(TimeOfDay.text(planned, zone: .system, now: now)))"
            }
            if let until = request.coalescingUntil {
                blockers += " (until \(TimeOfDay.text(until, zone: .system, now: now)))"
            }
            pending.add(request.app.rawValue, request.identifier.rawValue, request.kind.rawValue,
                        DurationText.until(request.earliestBeginDate, from: now), requires.isEmpty ? "-" : requires, blockers)
        }
        var running = TextTable("APP", "IDENTIFIER", "KIND", "STATE", "PID", "ELAPSED", "REMAINING", "REASON", "CPU%", "MEM")
        for task in listing.tasks {
            let remaining = task.state == .expiring
                ? "killed \(DurationText.until(task.killDeadline, from: now))"
                : DurationText.compact(task.remainingSeconds)
            running.add(task.app.rawValue, task.identifier.rawValue, task.kind.rawValue, task.state.rawValue, "\(task.pid)",
                        DurationText.compact(now.timeIntervalSince(task.startedAt)), remaining,
                        task.simulated ? "simulated" : task.launchReason,
                        task.cpuPercent.map { String(printf: "%.1f", $0) } ?? "-", task.memoryBytes.map(MemoryText.compact) ?? "-")
        }
        var transfers = TextTable("APP", "IDENTIFIER", "DIRECTION", "STATE", "BYTES", "URL")
        for transfer in listing.transfers {
            let expected = transfer.bytesExpected.map { "/\($0)" } ?? ""
            let asking = transfer.blockers.contains(.awaitingAnswer)
                ? " (asking app until \(transfer.delayedRequestAnswerBy.map { TimeOfDay.text($0, zone: .system, now: now) } ?? "-"))" : ""
            transfers.add(transfer.app.rawValue, transfer.identifier.rawValue, transfer.direction.rawValue,
                          transfer.state.rawValue + asking, "\(transfer.bytesTransferred)\(expected)", transfer.url)
        }
        print("PENDING REQUESTS (\(listing.requests.count))")
        if !listing.requests.isEmpty { print(pending.render()) }
        print("\nRUNNING TASKS (\(listing.tasks.count))")
        if !listing.tasks.isEmpty { print(running.render()) }
        print("\nTRANSFERS (\(listing.transfers.count))")
        if !listing.transfers.isEmpty { print(transfers.render()) }
        var pushes = TextTable("APP", "PUSH", "PRIORITY", "RECEIVED", "EXPIRES", "COALESCED", "BLOCKERS")
        for push in listing.pushes {
            pushes.add(push.app.rawValue, push.id.rawValue, "\(push.priority)", DurationText.since(push.receivedAt, from: now),
                       push.expiresAt.map { DurationText.until($0, from: now) } ?? "-", "\(push.coalescedCount)",
                       push.blockers.isEmpty ? "none (delivering)" : push.blockers.map(\.rawValue).joined(separator: ","))
        }
        print("\nHELD PUSHES (\(listing.pushes.count))")
        if !listing.pushes.isEmpty { print(pushes.render()) }
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "Whether the scheduler is up, the conditions, and counts.")

    @OptionGroup var locations: LocationOptions
    @Flag(help: "Print JSON.") var json = false

    struct Report: Encodable {
        var running: Bool
        var pid: Int32?
        var stateDirectory: String
        var configDirectory: String
        var heartbeat: DaemonHeartbeat?
        var conditions: ConditionsRecord?
        var pendingRequests: Int
        var runningTasks: Int
        var expiringTasks: Int
        var transfers: Int
        var inboxWaiting: Int
    }

    func run() throws {
        let now = Date()
        let paths = locations.paths
        let snapshot = StateSnapshot.load(paths)
        let pid = StateLock.holder(paths)
        let report = Report(
            running: pid != nil, pid: pid, stateDirectory: paths.root, configDirectory: locations.configDirectory,
            heartbeat: snapshot.heartbeat, conditions: snapshot.conditions, pendingRequests: snapshot.requests.count,
            runningTasks: snapshot.tasks.filter { $0.state == .running }.count,
            expiringTasks: snapshot.tasks.filter { $0.state == .expiring }.count, transfers: snapshot.transfers.count,
            inboxWaiting: (try? Inbox(paths: paths).waiting().count) ?? 0)
        if json {
            try printJSON(report)
            return
        }
        if let pid {
            let active = snapshot.heartbeat.map { ", last active \(DurationText.since($0.updatedAt, from: now))" } ?? ""
            let next = snapshot.heartbeat?.nextWakeAt.map { ", next wake \(DurationText.until($0, from: now))" } ?? ", nothing waiting on a timer"
            print("scheduler: running (pid \(pid))\(active)\(next)")
        } else {
            let last = snapshot.heartbeat.map { " (last seen \(DurationText.since($0.updatedAt, from: now)))" } ?? ""
            print("scheduler: not running\(last)")
        }
        printLine("state: \(paths.root)")
        printLine("config: \(locations.configDirectory)")
        if let conditions = snapshot.conditions {
            print("conditions: \(ConditionsDescription.describe(conditions))")
            if let sources = ConditionsDescription.describeSources(conditions) { print("sources: \(sources)") }
        } else {
            print("conditions: not measured yet")
        }
        print("pending: \(report.pendingRequests)  running: \(report.runningTasks)  expiring: \(report.expiringTasks)  transfers: \(report.transfers)  inbox: \(report.inboxWaiting)")
        reportUnreadable(snapshot)
    }
}
