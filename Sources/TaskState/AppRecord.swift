import FoundationEssentials

/// What the scheduler remembers about an app: `apps/<app>.json`.
public struct AppRecord: Codable, Hashable, Sendable {
    public var id: Identifier
    /// Background work switched on (`bgctl app enable|disable`).
    public var enabled: Bool
    /// How many overruns in a row have been punished; 0 after a clean run.
    public var throttleLevel: Int
    /// No launch before this time.
    public var throttledUntil: Date?
    public var launchCount: Int
    public var killCount: Int
    public var lastLaunchAt: Date?
    /// The app's running process that takes tasks as they come due, if one has attached.
    public var attachedProcess: AttachedProcess?
    /// Pushes delivered in the last hour (the rolling window of the push budget), oldest first.
    public var pushDeliveries: [Date]?
    /// How much the app's hourly push budget is cut for answering `noData` or overrunning; see
    /// `docs/scheduling.md#background-pushes`.
    public var pushBudgetCut: Int?
    /// `noData` answers in a row since the last cut or `newData`.
    public var pushNoDataInARow: Int?
    /// The app's answer to its latest push, and when.
    public var lastPushResult: FetchResult?
    public var lastPushResultAt: Date?
    /// The last launch of an app refresh the policy placed (not simulated): a rarely used app
    /// gets one a day.
    public var lastRefreshLaunchAt: Date?
    /// Message ids of the latest pushes received (at most 64), so a duplicate is delivered once.
    public var recentPushMessageIDs: [String]?
    /// The reason of the last launch (`appRefresh`, `processing`, `simulated`, ...).
    public var lastLaunchReason: String?
    /// What the overrun that set `throttledUntil` was: `<identifier> overran`, or that it died of
    /// the expiration signal.
    public var throttleCause: String?
    /// Launches, expiries and kills per hour over the last day.
    public var activity: AppActivity?
    /// When the CPU monitor last expired a task of the app (for its CPU or its memory), and why:
    /// `cpuLimit` or `memoryLimit`, then what was measured.
    public var lastCpuLimitAt: Date?
    public var lastCpuLimitReason: String?
    /// The app's standing for VoIP pushes, once it has had one (``VoIPState``).
    public var voip: VoIPState?
    /// Launches by the scheduler since a person last used the app (`appUsed` without a launch
    /// token): what the relaunch delay of a transfer created in the background grows with.
    public var backgroundLaunchesSinceUse: Int?

    public init(id: Identifier, enabled: Bool = true, throttleLevel: Int = 0, throttledUntil: Date? = nil,
                launchCount: Int = 0, killCount: Int = 0, lastLaunchAt: Date? = nil,
                attachedProcess: AttachedProcess? = nil) {
        self.id = id
        self.enabled = enabled
        self.throttleLevel = throttleLevel
        self.throttledUntil = throttledUntil
        self.launchCount = launchCount
        self.killCount = killCount
        self.lastLaunchAt = lastLaunchAt
        self.attachedProcess = attachedProcess
    }

    /// Whether launches are held back at `now`.
    public func isThrottled(at now: Date) -> Bool {
        guard let throttledUntil else { return false }
        return throttledUntil > now
    }
}
