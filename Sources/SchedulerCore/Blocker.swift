import TaskState

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

    /// Blockers that clear by themselves when a time passes.
    public var isTimed: Bool { self == .earliestBeginDate || self == .throttled }

    /// Blockers that clear when a probed machine condition changes.
    public var condition: Conditions.Name? {
        switch self {
        case .externalPower: return .power
        case .network: return .network
        case .idle: return .idle
        case .lowPower: return .lowpower
        default: return nil
        }
    }
}
