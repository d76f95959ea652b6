import Foundation
import TaskState

/// The set-up phases 2 and 3 share: one app per request, each with one app refresh request that
/// comes due a little later, and scripts that note the time of what they observe.
struct DueRequests {
    /// The apps, `<prefix>.a000` ... each permitted `<app>.refresh`.
    var apps: [BenchApp]
    /// When each app's request comes due, by app id (whole milliseconds, as the state files
    /// store dates, so the scheduler sees exactly this time).
    var due: [Identifier: Date] = [:]

    init(prefix: String, count: Int, executable: String) throws {
        apps = try (0..<count).map { index in
            let id = try Identifier(validating: String(format: "\(prefix).a%03d", index))
            return BenchApp(id: id, identifiers: [try Identifier(validating: "\(id.rawValue).refresh")],
                            modes: ["fetch"], executable: executable)
        }
    }

    /// Submits every request through the inbox, due `lead` seconds from now plus `stagger`
    /// seconds per request, so that each launch stands apart from the others.
    mutating func submit(to paths: StatePaths, lead: Double, stagger: Double) throws {
        let inbox = Inbox(paths: paths)
        let start = Date().timeIntervalSince1970
        for (index, app) in apps.enumerated() {
            let milliseconds = ((start + lead + Double(index) * stagger) * 1000).rounded(.up)
            let date = Date(timeIntervalSince1970: milliseconds / 1000)
            due[app.id] = date
            let request = SubmitRequest(app: app.id, identifier: app.identifiers[0], kind: .appRefresh, earliestBeginDate: date)
            try inbox.enqueue(Command(issuedAt: Date(), issuerPID: getpid(), action: .submit(request)))
        }
    }

    /// Requests the scheduler accepted only after they were already due: their launch latency
    /// would include the submit itself. Should be 0; a larger `--lead` fixes it.
    func lateSubmits(_ session: SchedulerSession) -> Int {
        session.events(.submitted).filter { event in
            guard let app = event.app, let due = due[app] else { return false }
            return event.time >= due
        }.count
    }

    /// The last event of `type` for each app.
    static func lastEvent(_ type: Event.Kind, in session: SchedulerSession) -> [Identifier: Event] {
        var result: [Identifier: Event] = [:]
        for event in session.events(type) { if let app = event.app { result[app] = event } }
        return result
    }

    /// The first time an app's script wrote into `<folder>/<app>.<suffix>` (seconds since 1970).
    func observed(in folder: String, suffix: String) -> [Identifier: Double] {
        var result: [Identifier: Double] = [:]
        for app in apps {
            guard let text = try? String(contentsOfFile: "\(folder)/\(app.id.rawValue).\(suffix)", encoding: .utf8),
                  let line = text.split(separator: "\n").first,
                  let seconds = Double(line.replacingOccurrences(of: ",", with: "."))
            else { continue }
            result[app.id] = seconds
        }
        return result
    }

    /// A bash line that appends the current time to `<folder>/$BGTASK_APP_ID.<suffix>`: bash 5's
    /// `$EPOCHREALTIME` (no extra process), else `date +%s.%N`.
    static func stampCommand(folder: String, suffix: String) -> String {
        #"printf '%s\n' "${EPOCHREALTIME:-$(date +%s.%N)}" >> '"# + folder + #"'/"$BGTASK_APP_ID".'"# + suffix + "'"
    }
}
