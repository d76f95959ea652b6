/// The kinds of background work, named as in `list --json` and the state files.
public enum TaskKind: String, Codable, Sendable, CaseIterable, Comparable {
    /// `BGAppRefreshTaskRequest`: a short refresh around `earliestBeginDate`.
    case appRefresh
    /// `BGProcessingTaskRequest`: deferrable maintenance, run when the machine is idle.
    case processing
    /// `beginBackgroundTask`: a running app finishing what the user started. Never pending.
    case finishing
    /// The app is woken to hear how the transfers of a background session ended
    /// (`handleEventsForBackgroundURLSession`). Never pending; the identifier is the session's.
    case urlSession
    /// A background push woke the app (`application(_:didReceiveRemoteNotification:)`). Never
    /// pending: held pushes wait in `pushes/`; the identifier is the push's.
    case remoteNotification

    /// The manifest background mode that allows this kind, if it needs one.
    public var requiredBackgroundMode: BackgroundMode? {
        switch self {
        case .appRefresh: return .fetch
        case .processing: return .processing
        case .remoteNotification: return .remoteNotification
        case .finishing, .urlSession: return nil
        }
    }

    public static func < (lhs: TaskKind, rhs: TaskKind) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// Background modes an app declares in its manifest (`UIBackgroundModes`).
public enum BackgroundMode: String, Codable, Sendable, CaseIterable {
    /// Allows app refresh requests.
    case fetch
    /// Allows processing requests.
    case processing
    /// Allows background pushes (Apple's `remote-notification`).
    case remoteNotification = "remote-notification"
}
