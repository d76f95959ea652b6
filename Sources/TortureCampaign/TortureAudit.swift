import Foundation
import TaskState

/// A command the campaign made durable in the inbox: acknowledged, since the contract says a
/// command renamed into `inbox/new/` is applied exactly once, scheduler running or not.
struct IssuedCommand {
    var command: Command
    var round: Int
    /// No scheduler held the lock when it was written (it was queued for the next one).
    var whileDown: Bool
}

/// Checks what was acknowledged against the state directory and the event log, once the
/// scheduler has settled: nothing lost, nothing doubled.
struct TortureAudit {
    let paths: StatePaths
    let apps: TortureApps
    let issued: [IssuedCommand]
    let round: Int

    func findings() -> (findings: [TortureReport.Finding], appLog: [AppLogLine]) {
        var findings: [TortureReport.Finding] = []
        func note(_ kind: TortureReport.Kind, _ detail: String) {
            findings.append(TortureReport.Finding(kind: kind, round: round, detail: detail))
        }
        let events = EventLog(paths: paths).recent(limit: .max).events
        let appLog = AppLogLine.read(apps.log)
        let snapshot = StateSnapshot.load(paths)

        // Every acknowledged command has an outcome.
        var outcomes: [String: CommandOutcome] = [:]
        for entry in issued {
            let id = entry.command.id
            if let outcome = CommandOutcome.stored(id, in: paths) {
                outcomes[id] = outcome
            } else {
                note(.lost, "\(entry.command.action.name.rawValue) \(id) (round \(entry.round)\(entry.whileDown ? ", queued while down" : "")) "
                     + "was never applied: no outcome")
            }
        }

        // No command's effect is recorded twice.
        var seen: [String: Int] = [:]
        for event in events {
            guard let command = event.command else { continue }
            seen["\(command) \(event.type.rawValue) \(event.app?.rawValue ?? "-") \(event.identifier?.rawValue ?? "-")", default: 0] += 1
        }
        for (key, count) in seen.sorted(by: { $0.key < $1.key }) where count > 1 {
            note(.doubled, "event applied \(count) times: \(key)")
        }

        // Submits: each accepted one is logged, and ends as pending, launched, cancelled, replaced
        // or a failed launch, exactly once.
        let accepted = issued.filter { entry in
            guard case .submit = entry.command.action else { return false }
            return outcomes[entry.command.id]?.succeeded == true
        }
        for entry in accepted {
            let logged = events.contains { $0.command == entry.command.id && ($0.type == .submitted || $0.type == .replaced) }
            if !logged { note(.lost, "submit \(entry.command.id) (round \(entry.round)) succeeded but no submitted/replaced event names it") }
        }
        // App starts the scheduler recorded (an unrecorded one is the unsupervised check's: it
        // waits, doing nothing, for a record that never comes).
        let recordings = events.filter { $0.type == .launched || $0.type == .adopted }
        var starts: [String: Int] = [:]
        for line in appLog {
            if case .start(let process, let identifiers) = line, recordings.contains(where: process.isNamed(by:)) {
                for identifier in identifiers { starts[identifier, default: 0] += 1 }
            }
        }
        for app in apps.apps {
            for task in app.tasks {
                let key = TaskKey(app: app.id, identifier: task.identifier)
                let submits = accepted.filter { entry in
                    if case .submit(let request) = entry.command.action { return request.app == key.app && request.identifier == key.identifier }
                    return false
                }.count
                let mine = events.filter { $0.app == key.app && $0.identifier == key.identifier }
                func count(_ type: Event.Kind) -> Int {
                    mine.filter { $0.type == type && ($0.kind == .appRefresh || $0.kind == .processing) }.count
                }
                let launched = count(.launched), started = starts[key.identifier.rawValue] ?? 0
                let pending = snapshot.requests.contains { $0.key == key } ? 1 : 0
                let ended = count(.cancelled) + count(.replaced) + count(.launchFailed) + pending
                let story = "\(submits) accepted submits; \(launched) launched events, \(started) recorded app starts, \(count(.cancelled)) cancelled, "
                    + "\(count(.replaced)) replaced, \(count(.launchFailed)) failed launches, \(pending) pending"
                if launched + ended < submits {
                    note(.lost, "\(key): \(submits - launched - ended) submit(s) neither pending, launched, cancelled nor replaced (\(story))")
                }
                if max(launched, started) + ended > submits {
                    note(.doubled, "\(key): \(max(launched, started) + ended - submits) launch(es) more than submits (\(story))")
                }
            }
        }

        // Completions the campaign sent that were applied are logged.
        for entry in issued {
            guard case .complete(let app, let identifier, _) = entry.command.action,
                  outcomes[entry.command.id]?.succeeded == true else { continue }
            if !events.contains(where: { $0.type == .completed && $0.command == entry.command.id }) {
                note(.lost, "complete \(entry.command.id) of \(app)/\(identifier) succeeded but no completed event names it")
            }
        }
        // Completions the apps sent that were acknowledged (applied, or queued while the scheduler
        // was down) complete their task: it is not recorded interrupted or exited instead.
        for line in appLog {
            guard case .complete(let process, let identifier, let status, let output) = line else { continue }
            // Exit 3 with the scheduler running: it took the command and did not answer in 10 s.
            if status == 3 && output.contains("did not answer") {
                note(.hang, "\(identifier) of \(process): bgctl complete said '\(output)'")
            }
            guard status == 0 else { continue }
            let about = events.filter { process.isNamed(by: $0) && $0.identifier?.rawValue == identifier }
            guard !about.contains(where: { $0.type == .completed }) else { continue }
            let instead = about.map(\.type.rawValue).joined(separator: ", ")
            note(.lost, "\(identifier) of \(process): bgctl complete said '\(output)' (exit 0), "
                 + "but no completed event; events for it: \(instead.isEmpty ? "none" : instead)")
        }
        return (findings, appLog)
    }
}
