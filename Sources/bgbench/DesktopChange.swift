import TaskState

/// One property change a desktop service announces, and what `conditions.json` shows once the
/// scheduler has it.
struct DesktopChange: Sendable {
    /// The service, in the report's words.
    var service: String
    var busName: String
    var path: String
    var interface: String
    var property: String
    /// The D-Bus signature and value, as `busctl` takes them.
    var signature: String
    var value: String
    /// The condition the change moves, and its value afterwards.
    var condition: Conditions.Name
    var expected: Bool

    /// `count` changes cycling through UPower, power-profiles-daemon, NetworkManager and logind,
    /// each service's property going away from where the mocks start and back again.
    static func cycle(count: Int, sessionPath: String) -> [DesktopChange] {
        let upower = "org.freedesktop.UPower"
        let profiles = "net.hadess.PowerProfiles"
        let manager = "org.freedesktop.NetworkManager"
        let login = "org.freedesktop.login1"
        let away = [
            DesktopChange(service: "UPower", busName: upower, path: "/org/freedesktop/UPower", interface: upower,
                          property: "OnBattery", signature: "b", value: "true", condition: .power, expected: false),
            DesktopChange(service: "power-profiles-daemon", busName: profiles, path: "/net/hadess/PowerProfiles", interface: profiles,
                          property: "ActiveProfile", signature: "s", value: "power-saver", condition: .lowpower, expected: true),
            // NM_METERED_YES.
            DesktopChange(service: "NetworkManager", busName: manager, path: "/org/freedesktop/NetworkManager", interface: manager,
                          property: "Metered", signature: "u", value: "1", condition: .expensive, expected: true),
            DesktopChange(service: "logind", busName: login, path: sessionPath, interface: "org.freedesktop.login1.Session",
                          property: "IdleHint", signature: "b", value: "true", condition: .idle, expected: true),
        ]
        let back: [(String, Bool)] = [("false", true), ("balanced", false), ("2", false), ("false", false)]  // NM_METERED_NO
        let returning = zip(away, back).map { change, undo in
            var change = change
            change.value = undo.0
            change.expected = undo.1
            return change
        }
        let round = away + returning
        return (0..<count).map { round[$0 % round.count] }
    }
}
