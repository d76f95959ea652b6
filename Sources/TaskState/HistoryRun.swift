import FoundationEssentials

/// One launched task as the event log tells it: from its launch to how it ended.
public struct HistoryRun: Sendable, Hashable {
    /// How a run ended.
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
        /// The app completed the task in time (`completed`, reason `success`, or a push's `newData`/`noData`).
        case completed
        /// The app completed it with failure, its process exited without completing it, or it
        /// could not be started (`launchFailed`).
        case failed
        /// Its budget ran out and the app stopped (completed or exited) before the kill.
        case expired
        /// Its budget ran out and the process was killed at the end of the grace period.
        case killed
        /// Its end was never logged: the scheduler found the process gone after a restart
        /// (`interrupted`), or the same identifier was launched again with no end in between.
        case lost
    }

    /// Who started a run, from the launch's reason.
    public enum Origin: String, Sendable, Hashable, CaseIterable {
        /// The policy placed it (`appRefresh`, `processing`, `urlSession`).
        case scheduler
        /// A background push launched it (`pushDelivered`).
        case push
        /// A person forced it: `bgctl simulate-launch`, or `l` in bgtop (reason `simulated`).
        case simulated
        /// The app asked for it itself: a finishing task (`bgctl begin-finishing`, `beginBackgroundTask`).
        case app

        init(reason: String?, kind: TaskKind?) {
            switch reason {
            case "simulated": self = .simulated
            case "finishing": self = .app
            case TaskKind.remoteNotification.rawValue: self = .push
            default: self = kind == .finishing ? .app : kind == .remoteNotification ? .push : .scheduler
            }
        }
    }

    public var app: Identifier
    public var identifier: Identifier
    public var origin: Origin
    /// When it was launched; for a run whose launch is not in the history (it began before the
    /// oldest event read, or was adopted after a restart), the earliest time the history can vouch for.
    public var start: Date
    /// False when `start` is not the logged launch (see `start`).
    public var startLogged: Bool
    /// When it ended; nil while it is open (no end logged yet).
    public var end: Date?
    public var outcome: Outcome?
    /// Its budget ran out (an `expired` event was seen).
    public var expired: Bool
    /// Taken over by a restarted scheduler (`adopted`).
    public var adopted: Bool
    /// The time of the latest event about it: where an open run that no longer runs is drawn to.
    public var lastSeen: Date

    public init(app: Identifier, identifier: Identifier, origin: Origin, start: Date, startLogged: Bool = true,
                end: Date? = nil, outcome: Outcome? = nil, expired: Bool = false, adopted: Bool = false) {
        self.app = app
        self.identifier = identifier
        self.origin = origin
        self.start = start
        self.startLogged = startLogged
        self.end = end
        self.outcome = outcome
        self.expired = expired
        self.adopted = adopted
        lastSeen = end ?? start
    }

    public var key: TaskKey { TaskKey(app: app, identifier: identifier) }
    public var isOpen: Bool { end == nil }
}

/// A stretch of time in which an app's launches were held back after an overrun: from its
/// `throttled` event (reason `level N`) to the release the scheduler set (`throttledUntil`, the
/// same settings' delay for that level), or earlier when a clean completion lifted it.
public struct ThrottleStretch: Sendable, Hashable {
    public var start: Date
    public var end: Date
    public var level: Int

    public init(start: Date, end: Date, level: Int) {
        self.start = start
        self.end = end
        self.level = level
    }
}
