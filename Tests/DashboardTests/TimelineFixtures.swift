import Dashboard
import Foundation
import TaskState

/// The busy screen's data with an hour of runs behind it: every way a run ends, every way it
/// is launched, throttles, and what comes next (begin dates, a planned launch, a transfer's start).
extension Fixtures {
    /// A throttle of level N lasts 15 min × 2^(N−1), as with `throttleInitialSeconds` 900.
    static let timelineThrottleDelay: @Sendable (Int) -> TimeInterval = { 900 * pow(2, Double($0 - 1)) }

    static func run(_ offset: TimeInterval, _ type: Event.Kind, _ app: String, _ identifier: String?, reason: String? = nil,
                    kind: TaskKind? = nil) -> Event {
        Event(time: at(offset), type: type, app: id(app), identifier: identifier.map(id), kind: kind, reason: reason,
              message: "\(app): \(type.rawValue)")
    }

    static let timelineEvents: [Event] = {
        let weather = ("com.example.weather", "com.example.weather.refresh")
        let mail = ("com.example.mail", "com.example.mail.refresh")
        let photos = ("com.example.photos", "com.example.photos.thumbnails")
        let chat = "com.example.chat"
        let backup = ("org.example.backup", "org.example.backup.prune")
        return [
            run(-3500, .launched, photos.0, photos.1, reason: "processing", kind: .processing),
            run(-3300, .launched, mail.0, mail.1, reason: "appRefresh", kind: .appRefresh),
            run(-3240, .completed, mail.0, mail.1, reason: "success"),
            run(-3000, .launched, weather.0, weather.1, reason: "appRefresh", kind: .appRefresh),
            run(-2960, .completed, weather.0, weather.1, reason: "success"),
            run(-2900, .expired, photos.0, photos.1, reason: "SIGUSR1"),
            run(-2860, .completed, photos.0, photos.1, reason: "success"),
            run(-2400, .launched, mail.0, "com.example.mail.fetch-now", reason: "simulated", kind: .appRefresh),
            run(-2300, .completed, mail.0, "com.example.mail.fetch-now", reason: "failure"),
            run(-2000, .launched, backup.0, backup.1, reason: "processing", kind: .processing),
            run(-1900, .interrupted, backup.0, backup.1),
            run(-1800, .launched, weather.0, weather.1, reason: "appRefresh", kind: .appRefresh),
            run(-1770, .expired, weather.0, weather.1, reason: "SIGUSR1"),
            run(-1640, .killed, weather.0, weather.1, reason: "overran"),
            run(-1640, .throttled, weather.0, nil, reason: "level 1"),
            run(-1500, .pushDelivered, chat, "push-77a0", reason: "remoteNotification", kind: .remoteNotification),
            run(-1380, .completed, chat, "push-77a0", reason: "newData"),
            run(-1200, .launched, "com.example.news", "com.example.news.refresh", reason: "appRefresh", kind: .appRefresh),
            run(-1080, .exited, "com.example.news", "com.example.news.refresh", reason: "exited with status 1"),
            run(-540, .launched, weather.0, weather.1, reason: "simulated", kind: .appRefresh),
            run(-510, .expired, weather.0, weather.1, reason: "SIGUSR1"),
            run(-500, .killed, weather.0, weather.1, reason: "overran"),
            run(-500, .throttled, weather.0, nil, reason: "level 2"),
            run(-480, .launched, photos.0, photos.1, reason: "processing", kind: .processing),
            run(-240, .launchFailed, "com.example.broken", "com.example.broken.refresh", reason: "appRefresh"),
            run(-90, .completed, "com.example.calendar", "com.example.calendar.refresh", reason: "success"),
            run(-60, .launched, backup.0, backup.1, reason: "simulated", kind: .processing),
            run(-20, .launched, chat, "com.example.chat.finishing-1", reason: "finishing", kind: .finishing),
            run(-5, .launched, mail.0, "com.example.mail.fetch-now", reason: "appRefresh", kind: .appRefresh),
        ]
    }()

    static let timeline: DashboardSnapshot = {
        var snapshot = busy
        var history = RunHistory(throttleDelay: timelineThrottleDelay)
        for event in timelineEvents { history.apply(event) }
        snapshot.history = history
        var waiting = transfer("com.example.podcasts", "episode-413", .download, "https://cdn.example.com/podcasts/episode-413.mp3",
                               .waiting, done: 0, of: 48_000_000)
        waiting.earliestBeginDate = at(600)
        var retrying = transfer("com.example.news", "feed-archive", .download, "https://news.example.com/archive.tar.gz",
                                .waiting, done: 4_096, of: 9_000_000, error: "HTTP 503 Service Unavailable", retries: 2)
        retrying.retryAt = at(300)
        snapshot.transfers += [waiting, retrying]
        let reader = PendingRequest(app: id("com.example.reader"), identifier: id("com.example.reader.refresh"), kind: .appRefresh,
                                    submittedAt: at(-600))
        snapshot.pending.append(DashboardSnapshot.PendingRow(request: reader, blockers: [.predictedUse], plannedLaunch: at(720),
                                                             predictedUse: at(1320)))
        return snapshot
    }()
}
