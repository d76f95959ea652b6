import FoundationEssentials
import TaskState

extension SchedulerState {
    /// The app has heard how a transfer ended; its record is removed.
    mutating func acknowledgeTransfer(app appID: Identifier, identifier: Identifier) -> Result<String, SchedulerError> {
        let key = TaskKey(app: appID, identifier: identifier)
        guard let record = transfers[key] else {
            return .failure(.noSuchTask("no transfer with identifier \(identifier) for \(appID)"))
        }
        guard !record.state.isActive else {
            return .failure(.invalidCommand("transfer \(identifier) is still \(record.state.rawValue); only a finished one can be acknowledged"))
        }
        removeTransfer(key)
        return .success("acknowledged \(identifier)")
    }

    /// Launches that wake an app to hear how the transfers of one of its background sessions
    /// ended (`handleEventsForBackgroundURLSession`): for a session whose transfers asked for
    /// launch events, when one has completed or failed, its app has no process attached (a
    /// running app hears of it by itself) and none running a task (a launched app that has not
    /// attached yet), and the app may run. One launch per app carries all its sessions; each
    /// finished transfer causes at most one launch. Apps in `excluding` (launched this turn) wait.
    public func dueSessionLaunches(at now: Date, excluding: Set<Identifier> = []) -> [LaunchPlan] {
        var sessions: [Identifier: Set<String>] = [:]
        for key in transferSchedule.sessionEventsPending {
            guard let record = transfers[key], let session = record.session else { continue }
            sessions[record.app, default: []].insert(session)
        }
        // An app is launched to answer about a delayed transfer as for its session's events.
        sessions.merge(sessionsAwaitingAnswers()) { $0.union($1) }
        var plans: [LaunchPlan] = []
        for (appID, names) in sessions.sorted(by: { $0.key < $1.key }) {
            let record = app(appID)
            guard let manifest = catalog.manifests[appID], record.attachedProcess == nil, record.enabled,
                  !record.isThrottled(at: now), !excluding.contains(appID),
                  !tasks.values.contains(where: { $0.app == appID && $0.kind != .finishing }) else { continue }
            let requests = names.sorted().compactMap { name -> PendingRequest? in
                guard let session = try? Identifier(validating: name) else { return nil }
                return PendingRequest(app: appID, identifier: session, kind: .urlSession, submittedAt: now)
            }
            guard !requests.isEmpty else { continue }
            plans.append(LaunchPlan(launchID: "\(appID)-\(SafeNumber.int64(now.timeIntervalSince1970 * 1000, .down))-urlSession", app: appID,
                                    manifest: manifest, requests: requests, reason: TaskKind.urlSession.rawValue,
                                    simulated: false))
        }
        return plans
    }

    /// When an app held back only by throttling may be launched for its sessions' events.
    func nextSessionLaunchWake(after now: Date) -> Date? {
        var earliest: Date?
        for key in transferSchedule.sessionEventsPending {
            guard let until = throttledUntil(key.app), until > now else { continue }
            earliest = min(earliest ?? until, until)
        }
        return earliest
    }

    /// Notes that the app was launched (or could not be) for a session's events, so each finished
    /// transfer causes one launch only.
    mutating func noteSessionLaunch(_ plan: LaunchPlan, now: Date) {
        guard plan.reason == TaskKind.urlSession.rawValue else { return }
        let sessions = Set(plan.requests.map(\.identifier.rawValue))
        noteQuestionLaunch(app: plan.app, sessions: sessions, now: now)
        for var record in transfers.values where record.app == plan.app && record.eventsLaunchedAt == nil
            && record.session.map(sessions.contains) == true && !record.state.isActive {
            record.eventsLaunchedAt = now
            setTransfer(record)
        }
    }
}
