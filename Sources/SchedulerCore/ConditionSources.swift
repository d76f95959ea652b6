import FoundationEssentials
import TaskState

extension SchedulerState {
    /// Takes where each condition now comes from (``ConditionsRecord/sources``); a change is
    /// recorded as a `conditionsChanged` event naming the old and the new source, so that a
    /// service that left the bus (and the files taking over) is never a mystery.
    public mutating func updateConditionSources(_ sources: [String: String], now: Date) {
        var updated = conditions
        let old = updated.sources ?? [:]
        guard old != sources else { return }
        updated.sources = sources
        setConditions(updated)
        // The first reading of a scheduler that had none is not a change of source.
        guard !old.isEmpty else { return }
        let changes = Conditions.Name.allCases.compactMap { name -> String? in
            let before = old[name.rawValue] ?? "files", after = sources[name.rawValue] ?? "files"
            return before == after ? nil : "\(name.rawValue) from \(after) (was \(before))"
        }
        guard !changes.isEmpty else { return }
        record(Event(time: now, type: .conditionsChanged, reason: "source",
                     message: "condition sources: \(changes.joined(separator: ", "))"))
    }
}

extension ConditionsDescription {
    /// Where each condition came from, in display order (`power=upower network=files ...`);
    /// `nil` for a record from a scheduler that read only the files.
    public static func describeSources(_ record: ConditionsRecord) -> String? {
        guard let sources = record.sources, !sources.isEmpty else { return nil }
        return Conditions.Name.allCases.map { "\($0.rawValue)=\(sources[$0.rawValue] ?? "files")" }.joined(separator: " ")
    }
}
