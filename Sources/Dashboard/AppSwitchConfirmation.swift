import TaskState

/// `d` in the apps panel: switching an app's background work off (or on again) asks first, then
/// sends the same command as `bgctl app disable|enable`.
enum AppSwitchConfirmation {
    /// The confirmation's question.
    static func question(app: Identifier, enable: Bool) -> String {
        enable ? "Switch background work for \(app) on again?" : "Switch background work for \(app) off?"
    }
}

extension DashboardState {
    /// Opens the confirmation for the app's row: off when it is on, on when it is off.
    mutating func askAppSwitch(_ row: DashboardSnapshot.AppRow) -> [DashboardEffect] {
        overlay = .confirmAppSwitch(app: row.app, enable: !row.record.enabled)
        return []
    }

    /// The answer to the confirmation: `y` sends the command, any other key abandons it.
    mutating func answerAppSwitch(_ key: Key, app: Identifier, enable: Bool) -> [DashboardEffect] {
        overlay = .none
        let word = enable ? "on" : "off"
        guard key == .character("y") || key == .character("Y") else {
            status = Status("\(app) left \(enable ? "off" : "on")")
            return []
        }
        return [.send(.setAppEnabled(app: app, enabled: enable), summary: "switch \(app) \(word)")]
    }
}
