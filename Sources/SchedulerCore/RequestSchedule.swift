import FoundationEssentials
import TaskState

/// The pending requests grouped by the machine conditions they need, each group in the order of
/// the date it may begin (undated requests first).
///
/// A machine condition holds a whole group or none of it, so a turn can pass over every group the
/// conditions hold without looking at its requests, and in the others look only at what is due by
/// now and at the head of the dates to come. This is what keeps a turn's cost flat as requests pile
/// up (issue #20): at 100 000 pending requests a turn looks at the few that matter.
struct RequestSchedule: Sendable {
    /// Requests that need the same machine conditions.
    typealias ConditionGroup = RequestConditionGroup

    private(set) var groups: [ConditionGroup: DateOrderedKeys] = [:]

    mutating func insert(_ request: PendingRequest) {
        groups[ConditionGroup(request), default: DateOrderedKeys()].insert(Self.entry(request))
    }

    mutating func remove(_ request: PendingRequest) {
        let group = ConditionGroup(request)
        groups[group]?.remove(Self.entry(request))
        if groups[group]?.isEmpty == true { groups[group] = nil }
    }

    private static func entry(_ request: PendingRequest) -> DateOrderedKeys.Entry {
        DateOrderedKeys.Entry(date: request.earliestBeginDate ?? .distantPast, key: request.key)
    }
}
