import FoundationEssentials

/// A reason a pending request is not running now, as shown in `bgctl list` and `bgtop`.
public enum Blocker: String, Codable, Sendable, CaseIterable {
    /// Its `earliestBeginDate` has not come yet.
    case earliestBeginDate
    /// It requires external power and the machine is on battery.
    case externalPower
    /// It requires a network connection and there is none.
    case network
    /// Processing waits for an idle machine.
    case idle
    /// The app overran its budget recently; its launches are delayed.
    case throttled
    /// Background work is switched off for the app.
    case appDisabled
    /// The machine is in low power mode.
    case lowPower
    /// A task with the same identifier is still running; the next one waits for it.
    case alreadyRunning
    /// The app's manifest is missing or broken.
    case noManifest
    /// An app refresh waits for the app's predicted next use, less the lead
    /// (`docs/scheduling.md#usage-prediction`).
    case predictedUse
    /// The app has not been used for `staleAfterDays`: it is refreshed at most once a day.
    case rarelyUsed
    /// The app has no habit to prepare for: it is refreshed no more often than it is used.
    case usageRate
    /// Its launch waits, at most `coalescingWindowSeconds`, for other apps' requests about to come
    /// due, so that they all go out in one wake-up.
    case coalescing
    /// `maxConcurrentLaunches` launched processes already run: it starts as one of them ends.
    case launchLimit
    /// A processing request of an app a person has not used within `processingRecentUseDays`
    /// (`docs/scheduling.md#the-small-rules`): it clears when the app is used, not by time.
    case notRecentlyUsed
    /// It does not allow expensive network access (``SubmitRequest/allowsExpensiveNetworkAccess``)
    /// and the network is metered (the `expensive` condition).
    case expensiveNetwork

    /// The short words of tables (`bgtop`'s pending and transfer panels); `bgctl` and the detail
    /// view use the case name itself.
    public var label: String {
        switch self {
        case .earliestBeginDate: return "begin date"
        case .externalPower: return "power"
        case .appDisabled: return "app off"
        case .lowPower: return "low power"
        case .alreadyRunning: return "still running"
        case .noManifest: return "no manifest"
        case .predictedUse: return "predicted use"
        case .rarelyUsed: return "rarely used"
        case .usageRate: return "use rate"
        case .launchLimit: return "queued"
        case .coalescing: return rawValue
        case .notRecentlyUsed: return "not used lately"
        case .expensiveNetwork: return "metered"
        case .network, .idle, .throttled: return rawValue
        }
    }

    /// Blockers that clear by themselves when a time passes.
    public var isTimed: Bool {
        self == .earliestBeginDate || self == .throttled || self == .predictedUse || self == .rarelyUsed || self == .usageRate
    }

    /// Blockers that clear when a probed machine condition changes.
    public var condition: Conditions.Name? {
        switch self {
        case .externalPower: return .power
        case .network: return .network
        case .idle: return .idle
        case .lowPower: return .lowpower
        case .expensiveNetwork: return .expensive
        default: return nil
        }
    }
}

/// Why a waiting transfer has not started.
public enum TransferBlocker: String, Codable, Sendable, CaseIterable {
    case earliestBeginDate
    /// It failed transiently and waits before trying again.
    case retryBackoff
    case network
    /// Discretionary transfers wait for external power.
    case externalPower
    case appDisabled
    /// Created while the scheduler had launched the app in the background: it waits out the
    /// relaunch delay (``TransferRecord/relaunchDelayUntil``), which grows with each background
    /// launch and goes back to 0 when a person uses the app.
    case relaunchDelay
    /// The scheduler asked the app (`willBeginDelayedRequest`) whether to begin, change or
    /// cancel it, and waits for the answer until ``TransferRecord/delayedRequestAnswerBy``.
    case awaitingAnswer
    /// It may not use expensive network access (``TransferRecord/mayUseExpensiveNetwork``) and
    /// the network is metered.
    case expensiveNetwork

    /// The short words of tables, as for ``Blocker/label``.
    public var label: String {
        switch self {
        case .earliestBeginDate: return Blocker.earliestBeginDate.label
        case .retryBackoff: return "retry"
        case .network: return Blocker.network.label
        case .externalPower: return Blocker.externalPower.label
        case .appDisabled: return Blocker.appDisabled.label
        case .relaunchDelay: return "relaunch delay"
        case .awaitingAnswer: return "asking app"
        case .expensiveNetwork: return Blocker.expensiveNetwork.label
        }
    }
}


extension Blocker {
    /// A wait placed by usage prediction (`predictedUse`, `rarelyUsed`, `usageRate`).
    public var isUsagePlan: Bool { self == .predictedUse || self == .rarelyUsed || self == .usageRate }

    /// Blockers a detail view lists only while they hold a request: most requests never meet
    /// them, and "ok" would say nothing.
    public var isListedOnlyWhenHolding: Bool {
        isUsagePlan || self == .coalescing || self == .launchLimit || self == .notRecentlyUsed || self == .expensiveNetwork
    }
}
