import Dashboard
import Foundation
import TaskState

/// Deterministic dashboard data for golden screens and key tests: a fixed clock, fixed pids.
enum Fixtures {
    /// 2026-11-22T12:00:00Z.
    static let now = Date(timeIntervalSince1970: 1_795_348_800)
    static let stateDirectory = "/home/ada/.local/state/bgtask"
    static let schedulerPID: Int32 = 4242

    static func id(_ text: String) -> Identifier {
        do { return try Identifier(validating: text) } catch { fatalError("bad fixture identifier \(text): \(error)") }
    }

    static func at(_ seconds: TimeInterval) -> Date { now.addingTimeInterval(seconds) }

    static let heartbeat = DaemonHeartbeat(pid: schedulerPID, version: "0.1.0", startedAt: at(-3 * 3600), updatedAt: at(-3),
                                           nextWakeAt: at(25 * 60), configDirectory: "/home/ada/.config/bgtask")

    /// On battery, network down (simulated), busy machine.
    static let busyConditions = ConditionsRecord(
        probed: Conditions(externalPower: false, network: true, idle: false, lowPower: false),
        overrides: ConditionOverrides(network: false), batteryPercent: 64, loadAverage: 2.4, probedAt: at(-40))

    static let goodConditions = ConditionsRecord(probed: Conditions(), probedAt: at(-10))

    static func pending(_ app: String, _ identifier: String, _ kind: TaskKind, earliest: TimeInterval? = nil,
                        network: Bool = false, power: Bool = false, submitted: TimeInterval,
                        blockers: [Blocker]) -> DashboardSnapshot.PendingRow {
        DashboardSnapshot.PendingRow(
            request: PendingRequest(app: id(app), identifier: id(identifier), kind: kind, earliestBeginDate: earliest.map(at),
                                    requiresNetworkConnectivity: network, requiresExternalPower: power, submittedAt: at(submitted)),
            blockers: blockers)
    }

    static func task(_ app: String, _ identifier: String, _ kind: TaskKind, pid: Int32, started: TimeInterval,
                     budget: TimeInterval, simulated: Bool = false, state: LaunchedTask.State = .running,
                     killIn: TimeInterval? = nil, name: String? = nil) -> LaunchedTask {
        LaunchedTask(app: id(app), identifier: id(identifier), kind: kind, state: state,
                     launchReason: simulated ? "simulated" : kind.rawValue, simulated: simulated, pid: pid,
                     processGroup: kind == .finishing ? nil : pid, processStartTicks: 1000 + UInt64(pid),
                     launchID: "launch-\(pid)", startedAt: at(started), deadline: at(started + budget),
                     expiringSince: state == .expiring ? at(started + budget) : nil, killDeadline: killIn.map(at), name: name)
    }

    static func transfer(_ app: String, _ identifier: String, _ direction: TransferRecord.Direction, _ url: String,
                         _ state: TransferRecord.State, done: Int64, of expected: Int64?, rate: Double? = nil,
                         error: String? = nil, retries: Int = 0) -> TransferRecord {
        TransferRecord(app: id(app), identifier: id(identifier), direction: direction, url: url, state: state,
                       bytesTransferred: done, bytesExpected: expected, bytesPerSecond: rate, createdAt: at(-900),
                       updatedAt: at(-1), retries: retries, lastError: error)
    }

    static func event(_ offset: TimeInterval, _ type: Event.Kind, app: String? = nil, id identifier: String? = nil,
                      pid: Int32? = nil, reason: String? = nil, _ message: String) -> Event {
        Event(time: at(offset), type: type, app: app.map(id), identifier: identifier.map(id), pid: pid, reason: reason, message: message)
    }

    // MARK: - Data

    static let busyPending: [DashboardSnapshot.PendingRow] = [
        pending("com.example.mail", "com.example.mail.refresh", .appRefresh, earliest: 25 * 60, submitted: -600,
                blockers: [.earliestBeginDate]),
        pending("com.example.photos", "com.example.photos.upload-library", .processing, power: true, submitted: -3000,
                blockers: [.externalPower, .idle]),
        pending("com.example.podcasts", "com.example.podcasts.download", .processing, network: true, submitted: -1200,
                blockers: [.network, .idle]),
        pending("org.example.backup", "org.example.backup.nightly", .processing, earliest: 7 * 3600 + 300, network: true,
                power: true, submitted: -7200, blockers: [.earliestBeginDate, .externalPower, .network, .idle]),
        pending("com.example.weather", "com.example.weather.refresh", .appRefresh, submitted: -300, blockers: [.throttled]),
        pending("com.example.notes", "com.example.notes.sync", .appRefresh, submitted: -2, blockers: []),
        pending("net.example.indexer-with-a-long-name", "net.example.indexer.reindex-everything-now", .processing,
                submitted: -86_400 * 2, blockers: [.idle]),
        DashboardSnapshot.PendingRow(
            push: HeldPush(app: id("com.example.chat"), id: id("push-5e1f0a9c"),
                           payload: try! PushPayload(validating: #"{"aps":{"content-available":1},"room":"ops"}"#),
                           priority: .conserve, receivedAt: at(-1), expiresAt: at(1800), collapseID: "ops",
                           source: "https://ntfy.example.org/ops", coalescedCount: 2),
            blockers: [.pushBudget, .lowPower]),
    ]

    static let busyTasks: [LaunchedTask] = [
        task("com.example.mail", "com.example.mail.fetch-now", .appRefresh, pid: 31_337, started: -5, budget: 30),
        task("com.example.photos", "com.example.photos.thumbnails", .processing, pid: 31_200, started: -480, budget: 600),
        task("com.example.chat", "com.example.chat.finishing-1", .finishing, pid: 30_001, started: -20, budget: 30,
             name: "send message"),
        task("org.example.backup", "org.example.backup.prune", .processing, pid: 31_402, started: -60, budget: 600, simulated: true),
    ]

    static let someTransfers: [TransferRecord] = [
        transfer("com.example.podcasts", "episode-412", .download, "https://cdn.example.com/podcasts/episode-412.mp3",
                 .running, done: 23_400_000, of: 52_000_000, rate: 1_200_000),
        transfer("com.example.photos", "upload-IMG_2041", .upload, "https://photos.example.com/api/v2/upload/IMG_2041.heic",
                 .waiting, done: 0, of: 3_100_000),
    ]

    static let allTransfers: [TransferRecord] = someTransfers + [
        transfer("com.example.maps", "tiles-region-7", .download, "https://tiles.example.org/region/7.pack",
                 .running, done: 880_000_000, of: 1_000_000_000, rate: 15_500_000),
        transfer("com.example.photos", "upload-IMG_2042", .upload, "https://photos.example.com/api/v2/upload/IMG_2042.heic",
                 .running, done: 2_800_000, of: 3_500_000, rate: 350_000),
        transfer("com.example.news", "feed-archive", .download, "https://news.example.com/archive.tar.gz",
                 .failed, done: 4_096, of: 9_000_000, error: "HTTP 503 Service Unavailable", retries: 3),
        transfer("com.example.radio", "live-stream-dump", .download, "http://stream.example.net/live",
                 .running, done: 7_340_000, of: nil, rate: 128_000),
        transfer("com.example.docs", "manual-pdf", .download, "https://docs.example.com/manual.pdf",
                 .completed, done: 2_048_000, of: 2_048_000),
        transfer("com.example.backup", "snapshot-0042", .upload, "https://backup.example.com/v1/snapshots/0042",
                 .paused, done: 120_000_000, of: 480_000_000),
    ]

    static let busyEvents: [Event] = [
        event(-3 * 3600, .daemonStarted, pid: schedulerPID, "scheduler started (pid 4242)"),
        event(-3 * 3600 + 1, .manifestLoaded, app: "com.example.mail", "manifest loaded: 2 identifiers"),
        event(-3000, .submitted, app: "com.example.photos", id: "com.example.photos.upload-library", "submitted processing request"),
        event(-900, .conditionsChanged, "power: ac -> battery"),
        event(-600, .replaced, app: "com.example.mail", id: "com.example.mail.refresh", "replaced the pending request"),
        event(-540, .launched, app: "com.example.weather", id: "com.example.weather.refresh", pid: 30_900, reason: "appRefresh",
              "launched (appRefresh) pid 30900"),
        event(-510, .expired, app: "com.example.weather", id: "com.example.weather.refresh", pid: 30_900, reason: "SIGUSR1",
              "budget of 30s used up; SIGUSR1 sent"),
        event(-500, .killed, app: "com.example.weather", id: "com.example.weather.refresh", pid: 30_900, reason: "SIGKILL",
              "did not complete within 10s of expiry; process group killed"),
        event(-500, .throttled, app: "com.example.weather", "throttled for 15m after overrunning its budget"),
        event(-480, .launched, app: "com.example.photos", id: "com.example.photos.thumbnails", pid: 31_200, reason: "processing",
              "launched (processing) pid 31200"),
        event(-420, .refused, app: "com.example.games", id: "com.example.games.sync", reason: "notPermitted",
              "refused: identifier not in the manifest's permitted identifiers"),
        event(-300, .cancelled, app: "com.example.news", id: "com.example.news.refresh", "cancelled by bgctl"),
        event(-240, .launchFailed, app: "com.example.broken", id: "com.example.broken.refresh", reason: "ENOENT",
              "launch failed: /opt/broken/bin/broken: No such file or directory"),
        event(-200, .commandRejected, "unknown command type 'explode'"),
        event(-150, .quarantined, "requests/com.example.x/bad.json: unreadable, moved to quarantine/"),
        event(-90, .completed, app: "com.example.calendar", id: "com.example.calendar.refresh", pid: 31_000, "completed (success)"),
        event(-80, .exited, app: "com.example.calendar", pid: 31_000, "process 31000 exited with status 0"),
        event(-70, .transferRestarted, app: "com.example.podcasts", id: "episode-212", reason: "the 206's ETag \"b\" is not \"a\"",
              "com.example.podcasts: transfer episode-212 dropped 4096 bytes and starts again from byte 0: the 206's ETag \"b\" is not \"a\""),
        event(-60, .launched, app: "org.example.backup", id: "org.example.backup.prune", pid: 31_402, reason: "simulated",
              "launched (simulated) pid 31402"),
        event(-20, .launched, app: "com.example.chat", id: "com.example.chat.finishing-1", pid: 30_001, reason: "finishing",
              "finishing task begun by pid 30001"),
        event(-5, .launched, app: "com.example.mail", id: "com.example.mail.fetch-now", pid: 31_337, reason: "appRefresh",
              "launched (appRefresh) pid 31337"),
    ]

    // MARK: - Snapshots

    static func snapshot(pending: [DashboardSnapshot.PendingRow] = [], tasks: [LaunchedTask] = [],
                         transfers: [TransferRecord] = [], events: [Event] = [],
                         conditions: ConditionsRecord? = goodConditions) -> DashboardSnapshot {
        DashboardSnapshot(now: now, stateDirectory: stateDirectory, schedulerPID: schedulerPID, heartbeat: heartbeat,
                          conditions: conditions, pending: pending, tasks: tasks, transfers: transfers, events: events)
    }

    static let empty = snapshot()

    /// A reader app opened at about 08:10 on weekdays (often) and at 20:30 every day (sometimes),
    /// its refresh waiting for the next morning's use.
    static let predicted: DashboardSnapshot = {
        var week = Array(repeating: 0.0, count: 168)
        for day in 0..<7 {
            if day < 5 { week[day * 24 + 8] = 0.9 }
            week[day * 24 + 20] = 0.3
        }
        let request = PendingRequest(app: id("com.example.reader"), identifier: id("com.example.reader.refresh"), kind: .appRefresh,
                                     submittedAt: at(-600))
        let row = DashboardSnapshot.PendingRow(request: request, blockers: [.predictedUse], plannedLaunch: at(20 * 3600),
                                               predictedUse: at(20 * 3600 + 600), usageWeek: week)
        return snapshot(pending: [row])
    }()

    static let busy = snapshot(pending: busyPending, tasks: busyTasks, transfers: someTransfers, events: busyEvents,
                               conditions: busyConditions)

    static let expiring = snapshot(
        tasks: [
            task("com.example.weather", "com.example.weather.refresh", .appRefresh, pid: 30_900, started: -33, budget: 30,
                 state: .expiring, killIn: 7),
            task("com.example.mail", "com.example.mail.fetch-now", .appRefresh, pid: 31_337, started: -5, budget: 30),
        ],
        events: [
            event(-33, .launched, app: "com.example.weather", id: "com.example.weather.refresh", pid: 30_900, reason: "appRefresh",
                  "launched (appRefresh) pid 30900"),
            event(-5, .launched, app: "com.example.mail", id: "com.example.mail.fetch-now", pid: 31_337, reason: "appRefresh",
                  "launched (appRefresh) pid 31337"),
            event(-3, .expired, app: "com.example.weather", id: "com.example.weather.refresh", pid: 30_900, reason: "SIGUSR1",
                  "budget of 30s used up; SIGUSR1 sent"),
        ])

    static let throttled = snapshot(
        pending: [
            pending("com.example.weather", "com.example.weather.refresh", .appRefresh, submitted: -120, blockers: [.throttled]),
            pending("com.example.mail", "com.example.mail.refresh", .appRefresh, earliest: 600, submitted: -60,
                    blockers: [.earliestBeginDate]),
        ],
        events: Array(busyEvents[5...8]) + [
            event(-120, .submitted, app: "com.example.weather", id: "com.example.weather.refresh", "submitted appRefresh request"),
        ])

    /// The waiting upload waits for external power (it is discretionary).
    static let transfers: DashboardSnapshot = {
        var made = snapshot(transfers: allTransfers)
        made.transferBlockers = [TaskKey(app: id("com.example.photos"), identifier: id("upload-IMG_2041")): [.externalPower]]
        return made
    }()

    static let schedulerDown: DashboardSnapshot = {
        var snapshot = busy
        snapshot.schedulerPID = nil
        snapshot.heartbeat?.updatedAt = at(-5 * 60 - 12)
        snapshot.problem = "no scheduler holds the lock: start it with bgtaskd (last seen 5m 12s ago)"
        return snapshot
    }()

    /// Busy, with six events in the history of com.example.weather.refresh (more than fit at 80×24).
    static let longHistory: DashboardSnapshot = {
        var snapshot = busy
        snapshot.events += [
            event(-4, .submitted, app: "com.example.weather", id: "com.example.weather.refresh", "submitted appRefresh request"),
            event(-3, .replaced, app: "com.example.weather", id: "com.example.weather.refresh", "replaced the pending request"),
            event(-2, .replaced, app: "com.example.weather", id: "com.example.weather.refresh", "replaced the pending request again"),
        ]
        return snapshot
    }()

    /// `count` pending requests, all due, with ids `com.example.bulk/task-000000` … in order.
    static func bulk(_ count: Int) -> DashboardSnapshot {
        let pending = (0..<count).map { index in
            DashboardSnapshot.PendingRow(
                request: PendingRequest(app: id("com.example.bulk"), identifier: id(String(format: "task-%06d", index)),
                                        kind: .appRefresh, submittedAt: at(-100_000 + TimeInterval(index))),
                blockers: [.throttled])
        }
        return snapshot(pending: pending)
    }

    // MARK: - Apps

    static func manifest(_ app: String, _ identifiers: [String], _ modes: [BackgroundMode]) -> AppManifest {
        AppManifest(id: id(app), executable: "/opt/\(app.split(separator: ".").last!)/bin/run",
                    permittedIdentifiers: identifiers.map(id), backgroundModes: modes)
    }

    static func activity(_ launches: Int, _ expiries: Int, _ kills: Int) -> AppActivity.Totals {
        AppActivity.Totals(launches: launches, expiries: expiries, kills: kills)
    }

    /// A throttled app, one with an attached process and a week of use, a busy one, one switched
    /// off, one whose manifest is broken and one known only from its record.
    static let someApps: [DashboardSnapshot.AppRow] = {
        var stubborn = AppRecord(id: id("com.example.stubborn"), throttleLevel: 2, throttledUntil: at(45), launchCount: 9, killCount: 4,
                                 lastLaunchAt: at(-75))
        stubborn.lastLaunchReason = "appRefresh"
        stubborn.throttleCause = "com.example.stubborn.refresh overran"
        var weather = AppRecord(id: id("com.example.weather"), launchCount: 140, killCount: 1, lastLaunchAt: at(-540),
                                attachedProcess: AttachedProcess(pid: 30_950, identifiers: [id("com.example.weather.refresh")],
                                                                 attachedAt: at(-600)))
        weather.lastLaunchReason = "appRefresh"
        var mail = AppRecord(id: id("com.example.mail"), launchCount: 12, lastLaunchAt: at(-5))
        mail.lastLaunchReason = "appRefresh"
        var backup = AppRecord(id: id("org.example.backup"), enabled: false, launchCount: 3, lastLaunchAt: at(-60))
        backup.lastLaunchReason = "simulated"
        return [
            DashboardSnapshot.AppRow(app: id("com.example.stubborn"), record: stubborn,
                                     manifest: manifest("com.example.stubborn", ["com.example.stubborn.refresh"], [.fetch]),
                                     lastDay: activity(6, 3, 2)),
            DashboardSnapshot.AppRow(app: id("com.example.weather"), record: weather,
                                     manifest: manifest("com.example.weather", ["com.example.weather.refresh"], [.fetch, .remoteNotification]),
                                     lastDay: activity(24, 1, 1), pushesThisHour: 3, pushBudgetPerHour: 3, usageWeek: predicted.pending[0].usageWeek),
            DashboardSnapshot.AppRow(app: id("com.example.mail"), record: mail,
                                     manifest: manifest("com.example.mail", ["com.example.mail.refresh", "com.example.mail.fetch-now"], [.fetch]),
                                     lastDay: activity(12, 0, 0)),
            DashboardSnapshot.AppRow(app: id("org.example.backup"), record: backup,
                                     manifest: manifest("org.example.backup", ["org.example.backup.nightly", "org.example.backup.prune"], [.processing]),
                                     lastDay: activity(3, 1, 0)),
            DashboardSnapshot.AppRow(app: id("com.example.broken"), record: AppRecord(id: id("com.example.broken")), manifest: nil,
                                     manifestProblems: ["executable /opt/broken/bin/broken does not exist"]),
            DashboardSnapshot.AppRow(app: id("net.example.ghost"), record: AppRecord(id: id("net.example.ghost"), launchCount: 1,
                                                                                     lastLaunchAt: at(-86_400 * 3)),
                                     manifest: nil),
        ]
    }()

    /// Busy, with the apps above.
    static let withApps: DashboardSnapshot = {
        var made = busy
        made.apps = someApps
        return made
    }()

    /// The apps above and three that take VoIP pushes: one cut off after failing to report its
    /// calls, one that owes a report now, one with a failure behind it.
    static let withVoIPApps: DashboardSnapshot = {
        var made = busy
        let modes: [BackgroundMode] = [.fetch, .remoteNotification]
        var phone = AppRecord(id: id("com.example.phone"), launchCount: 7, killCount: 3, lastLaunchAt: at(-30))
        phone.lastLaunchReason = "voipPush"
        phone.voip = VoIPState(strikes: 3, lastDelivery: at(-35), lastReport: at(-7200), blockedSince: at(-30), lastNotifier: "dbus")
        var talk = AppRecord(id: id("com.example.talk"), launchCount: 2, lastLaunchAt: at(-2))
        talk.lastLaunchReason = "voipPush"
        talk.voip = VoIPState(strikes: 0, lastDelivery: at(-2), lastReport: at(-600), reportDueBy: at(3), deliveredToPID: 31_020,
                              lastNotifier: "notify-send")
        var chat = AppRecord(id: id("com.example.chat"), launchCount: 4, killCount: 1, lastLaunchAt: at(-900))
        chat.lastLaunchReason = "voipPush"
        chat.voip = VoIPState(strikes: 1, lastDelivery: at(-900), lastReport: at(-3000), lastNotifier: "log")
        made.apps = [
            DashboardSnapshot.AppRow(app: id("com.example.phone"), record: phone,
                                     manifest: manifest("com.example.phone", [], modes), lastDay: activity(7, 0, 3),
                                     pushesThisHour: 0, pushBudgetPerHour: 3),
            DashboardSnapshot.AppRow(app: id("com.example.talk"), record: talk,
                                     manifest: manifest("com.example.talk", [], modes), lastDay: activity(2, 0, 0),
                                     pushesThisHour: 1, pushBudgetPerHour: 3),
            DashboardSnapshot.AppRow(app: id("com.example.chat"), record: chat,
                                     manifest: manifest("com.example.chat", [], modes), lastDay: activity(4, 0, 1),
                                     pushesThisHour: 0, pushBudgetPerHour: 3),
        ] + someApps
        return made
    }()

    /// An app whose identifiers repeat its long name, in every panel that shows identifiers.
    static let stubborn: DashboardSnapshot = {
        var made = snapshot(
            pending: [pending("com.example.stubborn", "com.example.stubborn.refresh", .appRefresh, submitted: -30, blockers: [.throttled])],
            tasks: [task("com.example.stubborn", "com.example.stubborn.cleanup", .processing, pid: 31_500, started: -4, budget: 600)],
            transfers: [transfer("com.example.stubborn", "com.example.stubborn.assets", .download, "https://cdn.example.com/stubborn/assets.pack",
                                 .running, done: 1_000_000, of: 4_000_000, rate: 500_000)],
            events: busyEvents)
        made.apps = [someApps[0]]
        return made
    }()

    /// Busy, with every transfer.
    static let busyTransfers = snapshot(pending: busyPending, tasks: busyTasks, transfers: allTransfers, events: busyEvents,
                                        conditions: busyConditions)

    /// The row id the dashboard uses for an app's identifier.
    static func rowID(_ app: String, _ identifier: String) -> String { "\(app)/\(identifier)" }

    /// The row id of an app in the apps panel.
    static func appRowID(_ app: String) -> String { "app/\(app)" }
}
