import Foundation
import TestSupport
import Testing
import TaskState

/// Usage prediction with the real scheduler and `bgctl`: a history imported from an LSApp trace
/// places the refresh before the usual use, visibly, across `kill -9`.
@Suite struct UsagePredictionEndToEndTests {
    static let app = "com.example.reader"

    /// An LSApp trace of an app opened every day for three weeks at `hour`:`minute` local time,
    /// with a header, a Closed row per open, and a row of an app no --map names.
    static func trace(hour: Int, minute: Int, now: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        var rows = ["user_id\tsession_id\ttimestamp\tapp_name\tevent_type"]
        for day in 1...21 {
            let date = calendar.date(bySettingHour: hour, minute: minute, second: 0, of: now.addingTimeInterval(-Double(day) * 86_400))!
            rows.append("1\t\(day)\t\(formatter.string(from: date))\tReader\tOpened")
            rows.append("1\t\(day)\t\(formatter.string(from: date.addingTimeInterval(120)))\tReader\tClosed")
        }
        rows.append("1\t99\t\(formatter.string(from: now.addingTimeInterval(-3600)))\tSolitaire\tOpened")
        return rows.joined(separator: "\n") + "\n"
    }

    @Test func anImportedHabitPlacesTheRefreshBeforeTheUseVisiblyAndDurably() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: ["\(Self.app).refresh"], modes: ["fetch"], script: "exit 0\n")
        var daemon = try env.startDaemon()
        defer { daemon.stop() }
        // Two hours on, so the plan is in the future whatever the time of the run.
        let now = Date()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .current
        let use = now.addingTimeInterval(2 * 3600)
        let parts = calendar.dateComponents([.hour, .minute], from: use)
        let tracePath = env.root + "/lsapp.tsv"
        try Self.trace(hour: parts.hour!, minute: parts.minute!, now: now).write(toFile: tracePath, atomically: true, encoding: .utf8)

        let imported = try env.bgctl("usage", "import", tracePath, "--map", "Reader=\(Self.app)")
        #expect(imported.status == 0, "\(imported)")
        #expect(imported.stdout.contains("recorded 21 use(s) of \(Self.app)"), "\(imported)")
        #expect(imported.stderr.contains("skipped 'Solitaire' (first on line 44): no --map for it"), "\(imported)")

        #expect(try env.bgctl("submit", "--app", Self.app, "--id", "\(Self.app).refresh", "--kind", "refresh").status == 0)
        func request() throws -> [String: Any] { try #require(try env.requests().first) }
        #expect(try request()["blockers"] as? [String] == ["predictedUse"])
        let planned = try #require(JSONFormat.date(from: try request()["plannedLaunchAt"] as? String ?? ""))
        let predicted = try #require(JSONFormat.date(from: try request()["predictedUseAt"] as? String ?? ""))
        #expect(predicted.timeIntervalSince(planned) == 600, "the lead is 10 minutes")
        #expect(abs(predicted.timeIntervalSince(use)) < 61, "the use is predicted at its usual minute: \(predicted) vs \(use)")
        #expect(try env.bgctl("list").stdout.contains("predictedUse (use ~"))

        let shown = try env.bgctl("usage", Self.app)
        #expect(shown.status == 0)
        #expect(shown.stdout.contains("21 use(s)"), "\(shown)")
        #expect(shown.stdout.contains("refresh planned"), "\(shown)")

        // bgtop says the same (its clock times in UTC), and Enter draws the week.
        let tmux = try TmuxSession(command: "\(TestEnvironment.binaries)/bgtop --state \(env.state) --config \(env.config); sleep 60",
                                   width: 120, height: 40)
        let utc = { (date: Date) -> String in
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents([.hour, .minute], from: date)
            return String(format: "%02d:%02d", parts.hour!, parts.minute!)
        }
        let screen = try tmux.waitFor("use ~\(utc(predicted)), refresh \(utc(planned))")
        #expect(screen.contains("Pending requests (1)"), "\(screen)")
        tmux.send("Enter")
        let detail = try tmux.waitFor("week of use")
        #expect(detail.contains("planned launch"), "\(detail)")
        tmux.send("q")

        daemon.crash()
        daemon = try env.startDaemon()
        #expect(try request()["blockers"] as? [String] == ["predictedUse"], "the history survives kill -9")
        #expect(try env.bgctl("app", "used", Self.app).status == 0)
        #expect(env.events(.appUsed).count == 2)
        #expect(try env.tasks().isEmpty, "nothing launched before its planned time")
    }

    static let other = "com.example.writer"

    /// A state with ``app`` and ``other``, each with a refresh identifier.
    static func twoApps() throws -> TestEnvironment {
        let env = try TestEnvironment()
        for app in [Self.app, Self.other] {
            try env.addApp(app, identifiers: ["\(app).refresh"], modes: ["fetch"], script: "exit 0\n")
        }
        return env
    }

    /// bgctl reads and shows times in the user's time zone (`TZ`), daylight saving time included,
    /// as Foundation's ICU zones give them: FoundationEssentials alone knows only GMT.
    @Test func bgctlReadsAndShowsTimesInTheUsersTimeZone() throws {
        let env = try Self.twoApps()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let now = Date()
        /// 08:10 on the day `daysAgo` days back in `zone`, and the trace row that says so.
        func opened(daysAgo: Double, in zone: TimeZone, app: String) throws -> (date: Date, path: String) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            let date = try #require(calendar.date(bySettingHour: 8, minute: 10, second: 0, of: now.addingTimeInterval(-daysAgo * 86_400)))
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            let stamp = String(format: "%04d-%02d-%02d 08:10:00", parts.year!, parts.month!, parts.day!)
            let path = env.root + "/\(app).tsv"
            try "1\t1\t\(stamp)\t\(app)\tOpened\n".write(toFile: path, atomically: true, encoding: .utf8)
            return (date, path)
        }
        func report(_ app: String, _ environment: [String: String]) throws -> [String: Any] {
            let shown = try env.bgctl("usage", app, "--json", environment: environment)
            return try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any], "\(shown)")
        }

        // Kolkata: a half-hour offset and no daylight saving time.
        let kolkata = ["TZ": "Asia/Kolkata"]
        let recent = try opened(daysAgo: 3, in: TimeZone(identifier: "Asia/Kolkata")!, app: "Reader")
        let imported = try env.bgctl("usage", "import", recent.path, "--map", "Reader=\(Self.app)", environment: kolkata)
        #expect(imported.status == 0, "\(imported)")
        let first = try report(Self.app, kolkata)
        #expect(first["timeZone"] as? String == "Asia/Kolkata", "\(first)")
        #expect(JSONFormat.date(from: first["lastUse"] as? String ?? "") == recent.date, "\(first), expected \(recent.date)")
        #expect(try env.bgctl("usage", Self.app, environment: kolkata).stdout.contains("hours in Asia/Kolkata"))

        // Paris, half a year back: moved forward by whole weeks, still 08:10 in Paris whichever
        // side of a change of daylight saving time each date is. `:` before the name is the C form.
        let paris = TimeZone(identifier: "Europe/Paris")!
        let old = try opened(daysAgo: 190, in: paris, app: "Writer")
        let moved = try env.bgctl("usage", "import", old.path, "--map", "Writer=\(Self.other)", environment: ["TZ": ":Europe/Paris"])
        #expect(moved.stdout.contains("moved the trace 27 week(s) forward"), "\(moved)")
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = paris
        let expected = try #require(calendar.date(byAdding: .weekOfYear, value: 27, to: old.date))
        let second = try report(Self.other, ["TZ": ":Europe/Paris"])
        #expect(second["timeZone"] as? String == "Europe/Paris", "\(second)")
        #expect(JSONFormat.date(from: second["lastUse"] as? String ?? "") == expected, "\(second), expected \(expected)")
    }

    /// A time that the last change back from daylight saving time in Paris repeats reads as the
    /// earlier moment, whatever rows came before it (the C library's `mktime` alone would pick by
    /// the row before: after a winter row, the later one).
    @Test func aRepeatedLocalTimeReadsAsTheEarlierMomentWhateverCameBefore() throws {
        let env = try Self.twoApps()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let paris = TimeZone(identifier: "Europe/Paris")!
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = paris
        // The last change back (clocks from 03:00 summer time to 02:00): the hour 02:00–03:00 repeats.
        var fallBacks: [Date] = []
        var cursor = Date().addingTimeInterval(-366 * 86_400)
        while let next = paris.nextDaylightSavingTimeTransition(after: cursor), next < Date().addingTimeInterval(-6 * 3600) {
            if !paris.isDaylightSavingTime(for: next) { fallBacks.append(next) }
            cursor = next
        }
        let transition = try #require(fallBacks.last, "a change back within the last year")
        let day = calendar.dateComponents([.year, .month, .day], from: transition)
        let stamp = { (hour: Int) in String(format: "%04d-%02d-%02d %02d:30:00", day.year!, day.month!, day.day!, hour) }
        let earlier = try #require(calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day, hour: 2, minute: 30)))
        #expect(paris.isDaylightSavingTime(for: earlier), "the first 02:30 is summer time")
        let path = env.root + "/repeat.tsv"
        try "1\t1\t\(stamp(5))\tWinter\tOpened\n1\t2\t\(stamp(2))\tRepeat\tOpened\n".write(toFile: path, atomically: true, encoding: .utf8)
        let imported = try env.bgctl("usage", "import", path, "--no-shift", "--map", "Repeat=\(Self.app)", "--map", "Winter=\(Self.other)",
                                     environment: ["TZ": "Europe/Paris"])
        #expect(imported.status == 0, "\(imported)")
        let shown = try env.bgctl("usage", Self.app, "--json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(shown.stdout.utf8)) as? [String: Any], "\(shown)")
        #expect(JSONFormat.date(from: object["lastUse"] as? String ?? "") == earlier, "\(object), expected \(earlier)")
    }

    @Test func aBadTraceLineIsNamedAndNothingIsSent() throws {
        let env = try TestEnvironment()
        try env.addApp(Self.app, identifiers: ["\(Self.app).refresh"], modes: ["fetch"], script: "exit 0\n")
        let path = env.root + "/bad.tsv"
        try "1\t1\t2026-11-20 08:10:00\tReader\tOpened\n1\t2\t2026-11-21 8:10\tReader\tOpened\n".write(toFile: path, atomically: true, encoding: .utf8)
        let result = try env.bgctl("usage", "import", path, "--map", "Reader=\(Self.app)")
        #expect(result.status == 2)
        #expect(result.stderr == "bgctl: \(path): line 2: bad timestamp '2026-11-21 8:10': expected YYYY-MM-DD HH:MM:SS\n")
        #expect(try Inbox(paths: env.paths).waiting().isEmpty)
        let future = try env.bgctl("app", "used", Self.app, "--at", "2099-01-01T00:00:00Z")
        #expect(future.status == 2)
        #expect(future.stderr.hasPrefix("bgctl: bad --at '2099-01-01T00:00:00.000Z': expected a date from "), "\(future)")
    }
}
