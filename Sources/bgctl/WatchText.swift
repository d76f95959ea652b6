import FoundationEssentials
import StateFeed
import TaskState

/// `bgctl watch` without `--json`: a line a person can read for each change (what was written or
/// went, the scheduler coming or going) and one per new event.
struct WatchText {
    func describe(_ snapshot: FeedSnapshot) -> Data {
        let scheduler = snapshot.schedulerPID.map { "scheduler up (pid \($0))" } ?? "scheduler down"
        var line = "\(stamp())  watching \(snapshot.stateDirectory): \(snapshot.requests.count) pending, \(snapshot.tasks.count) running, "
            + "\(snapshot.transfers.count) transfers, \(scheduler)"
        if let problem = snapshot.directoryProblem { line += "; \(problem)" }
        return Data((TerminalText.escaped(line) + "\n").utf8)
    }

    func describe(_ change: FeedChange) -> Data {
        var parts: [String] = []
        func records<R: Codable & Sendable, K: Codable & Sendable>(_ name: String, _ records: FeedChange.Records<R, K>?, _ key: (K) -> String, _ own: (R) -> String) {
            guard let records else { return }
            if !records.set.isEmpty { parts.append("\(name) written: " + records.set.map(own).joined(separator: ", ")) }
            if !records.removed.isEmpty { parts.append("\(name) gone: " + records.removed.map(key).joined(separator: ", ")) }
        }
        records("requests", change.requests, { $0.taskKey.description }, { $0.key.description })
        records("tasks", change.tasks, { $0.taskKey.description }, { "\($0.key) (\($0.state.rawValue))" })
        records("transfers", change.transfers, { $0.taskKey.description }, { "\($0.key) (\($0.state.rawValue))" })
        records("pushes", change.pushes, { $0.taskKey.description }, { $0.key.description })
        records("apps", change.apps, { $0.rawValue }, { $0.id.rawValue })
        if let pid = change.schedulerPID { parts.append("scheduler up (pid \(pid))") }
        if change.cleared?.contains("schedulerPID") == true { parts.append("scheduler down") }
        if let problem = change.directoryProblem { parts.append(problem) }
        if change.conditions != nil { parts.append("conditions changed") }
        if let files = change.unreadable, !files.isEmpty { parts.append("unreadable: " + files.map(\.path).joined(separator: ", ")) }
        if change.settings != nil || change.manifests != nil { parts.append("configuration changed") }
        var text = parts.isEmpty ? "" : "\(stamp())  " + TerminalText.escaped(parts.joined(separator: "; ")) + "\n"
        for event in change.events ?? [] {
            text += "\(JSONFormat.string(from: event.time))  \(event.type.rawValue.padded(toWidth: 19))\(TerminalText.escaped(event.message))\n"
        }
        return Data(text.utf8)
    }

    private func stamp() -> String { JSONFormat.string(from: Date()) }
}
