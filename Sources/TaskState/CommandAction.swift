import FoundationEssentials

/// What a command asks for.
public enum CommandAction: Hashable, Sendable {
    case submit(SubmitRequest)
    case cancel(app: Identifier, identifier: Identifier)
    case cancelAll(app: Identifier)
    /// `_simulateLaunchForTaskWithIdentifier:`; the app may be left out when the identifier is unique.
    case simulateLaunch(identifier: Identifier, app: Identifier?)
    /// `_simulateExpirationForTaskWithIdentifier:`.
    case simulateExpiration(identifier: Identifier, app: Identifier?)
    /// `setTaskCompleted(success:)`.
    case complete(app: Identifier, identifier: Identifier, success: Bool)
    /// `beginBackgroundTask(withName:)` for the process `pid`.
    case beginFinishing(app: Identifier, name: String?, pid: Int32)
    case setAppEnabled(app: Identifier, enabled: Bool)
    case setConditions(ConditionOverrides)
    case clearConditions
    /// A running process of `app` has registered handlers for `identifiers` and takes tasks as
    /// they come due (the app library sends this when launching has finished).
    /// `acceptsPushes`: it registered a push handler, and background pushes of the app go to it
    /// too; `acceptsVoIPPushes`: it registered for VoIP pushes, and those go to it.
    case attach(app: Identifier, pid: Int32, identifiers: [Identifier], acceptsPushes: Bool = false,
                acceptsVoIPPushes: Bool = false)
    /// The process is going away: hand it nothing more.
    case detach(app: Identifier, pid: Int32)
    /// A background download or upload for the scheduler to carry.
    case transferCreate(TransferRequest)
    case transferCancel(app: Identifier, identifier: Identifier)
    case transferPause(app: Identifier, identifier: Identifier)
    case transferResume(app: Identifier, identifier: Identifier)
    /// The app has heard how a transfer ended: its record can go.
    case transferAcknowledge(app: Identifier, identifier: Identifier)
    /// A background push for the app (`bgctl push`, a push subscription): delivered now, held,
    /// coalesced or dropped by the rules of `docs/scheduling.md#background-pushes`.
    case push(PushRequest)
    /// The app's push handler finished (`UIBackgroundFetchResult`): completes the push's task.
    case answerPush(app: Identifier, identifier: Identifier, result: FetchResult)
    /// A person used the app at these times (`bgctl app used`, `bgctl usage import`, the library
    /// when a process a person started finishes launching): the usage prediction learns from them.
    case appUsed(app: Identifier, uses: [Date])
    /// The app reported an incoming call (CallKit's `reportNewIncomingCall`), as a VoIP push
    /// obliges it to: see `docs/scheduling.md#voip-pushes`.
    case reportCall(CallReport)
    /// The app's answer to the question before a delayed transfer's begin (`willBeginDelayedRequest`).
    case transferAnswer(DelayedRequestAnswer)

    /// The `type` written on disk.
    public enum Name: String, Codable, Sendable, CaseIterable {
        case submit, cancel, cancelAll, simulateLaunch, simulateExpiration, complete, beginFinishing
        case setAppEnabled, setConditions, clearConditions, attach, detach
        case transferCreate, transferCancel, transferPause, transferResume, transferAcknowledge
        case push, answerPush, appUsed
        case reportCall
        case transferAnswer
    }

    public var name: Name {
        switch self {
        case .submit: return .submit
        case .cancel: return .cancel
        case .cancelAll: return .cancelAll
        case .simulateLaunch: return .simulateLaunch
        case .simulateExpiration: return .simulateExpiration
        case .complete: return .complete
        case .beginFinishing: return .beginFinishing
        case .setAppEnabled: return .setAppEnabled
        case .setConditions: return .setConditions
        case .clearConditions: return .clearConditions
        case .attach: return .attach
        case .detach: return .detach
        case .transferCreate: return .transferCreate
        case .transferCancel: return .transferCancel
        case .transferPause: return .transferPause
        case .transferResume: return .transferResume
        case .transferAcknowledge: return .transferAcknowledge
        case .push: return .push
        case .answerPush: return .answerPush
        case .appUsed: return .appUsed
        case .reportCall: return .reportCall
        case .transferAnswer: return .transferAnswer
        }
    }
}
