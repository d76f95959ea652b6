import FoundationEssentials
import TaskState

extension SchedulerState {
    /// `notRecentlyUsed` when `processingRecentUseDays` is set and `request` is a processing
    /// request of an app no person has used within that many days (Apple: processing tasks are for
    /// apps used recently or that asked from the foreground); `nil` otherwise.
    ///
    /// The wait is not timed: only a use (`appUsed`, which a process a person started records when
    /// it finishes launching or submits a processing request) can clear it, and that use is a
    /// command, which the scheduler acts on when it arrives. Time only makes a use older, so
    /// nothing has to wake up for this rule.
    func recentUseBlocker(for request: PendingRequest, at now: Date) -> Blocker? {
        let days = settings.processingRecentUseDays
        guard days > 0, request.kind == .processing else { return nil }
        if let last = usage[request.app]?.lastUse, now.timeIntervalSince(last) <= days * 86_400 { return nil }
        return .notRecentlyUsed
    }
}
