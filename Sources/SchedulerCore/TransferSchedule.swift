import FoundationEssentials
import TaskState

/// The transfers indexed by what a turn asks of them, so that a turn with a thousand transfers
/// looks at the few that can change now (issue #20): waiting transfers by the conditions they
/// need and the time that holds them, active ones by their resource deadline, finished ones by
/// when they finished, and the small sets of those with a question or a session launch pending.
struct TransferSchedule: Sendable {
    /// Waiting transfers that need the same machine conditions: a condition holds all of a group
    /// or none of it.
    struct ConditionGroup: Hashable, Sendable {
        var isDiscretionary: Bool
        var mayUseExpensiveNetwork: Bool

        init(_ record: borrowing TransferRecord) {
            isDiscretionary = record.isDiscretionary
            mayUseExpensiveNetwork = record.mayUseExpensiveNetwork
        }

        /// The blockers every waiting transfer of the group has under `effective`, in the order
        /// ``SchedulerState/transferBlockers(for:at:)`` lists them.
        func conditionBlockers(under effective: Conditions) -> [TransferBlocker] {
            var result: [TransferBlocker] = []
            if !effective.network { result.append(.network) }
            if isDiscretionary && !effective.externalPower { result.append(.externalPower) }
            if effective.expensive && !mayUseExpensiveNetwork { result.append(.expensiveNetwork) }
            return result
        }
    }

    /// Waiting transfers by group, each in the order of ``heldUntil(_:)``.
    private(set) var waiting: [ConditionGroup: DateOrderedKeys] = [:]
    /// Active transfers (waiting, running, paused) by their resource deadline.
    private(set) var active = DateOrderedKeys()
    /// Finished transfers by when they finished.
    private(set) var finished = DateOrderedKeys()
    private(set) var running: Set<TaskKey> = []
    /// Waiting transfers whose app is to be asked, or has been and not answered yet.
    private(set) var questioned: Set<TaskKey> = []
    /// Finished transfers whose session's launch for events has not happened yet.
    private(set) var sessionEventsPending: Set<TaskKey> = []

    /// The last of the times that hold a waiting transfer (its date, its retry, the relaunch
    /// delay, the time to answer a question), or the distant past when none does.
    static func heldUntil(_ record: borrowing TransferRecord) -> Date {
        let answerBy = SchedulerState.isAwaitingAnswer(record) ? record.delayedRequestAnswerBy : nil
        return [record.earliestBeginDate, record.retryAt, record.relaunchDelayUntil, answerBy].compactMap { $0 }.max() ?? .distantPast
    }

    mutating func insert(_ record: borrowing TransferRecord) {
        let key = record.key
        if record.state == .waiting {
            waiting[ConditionGroup(record), default: DateOrderedKeys()].insert(.init(date: Self.heldUntil(record), key: key))
            if SchedulerState.isAwaitingAnswer(record) || SchedulerState.needsQuestion(record) { questioned.insert(key) }
        }
        if record.state == .running { running.insert(key) }
        if record.state.isActive {
            active.insert(.init(date: record.resourceDeadline, key: key))
        } else if let finishedAt = record.finishedAt {
            finished.insert(.init(date: finishedAt, key: key))
        }
        if Self.hasSessionEventsPending(record) { sessionEventsPending.insert(key) }
    }

    mutating func remove(_ record: borrowing TransferRecord) {
        let key = record.key
        if record.state == .waiting {
            let group = ConditionGroup(record)
            waiting[group]?.remove(.init(date: Self.heldUntil(record), key: key))
            if waiting[group]?.isEmpty == true { waiting[group] = nil }
        }
        questioned.remove(key)
        running.remove(key)
        if record.state.isActive {
            active.remove(.init(date: record.resourceDeadline, key: key))
        } else if let finishedAt = record.finishedAt {
            finished.remove(.init(date: finishedAt, key: key))
        }
        sessionEventsPending.remove(key)
    }

    static func hasSessionEventsPending(_ record: borrowing TransferRecord) -> Bool {
        record.sessionSendsLaunchEvents == true && record.eventsLaunchedAt == nil && record.session != nil
            && (record.state == .completed || record.state == .failed)
    }
}
