import FoundationEssentials
import TaskState

/// What the desktop's services said over D-Bus; `nil` where a service is absent, gone or sent
/// nonsense, so that the kernel's files decide that condition instead.
public struct DesktopReading: Sendable, Equatable {
    /// UPower's `OnBattery`.
    public var onBattery: Bool?
    /// UPower's display device `Percentage`, when it has a battery (`IsPresent`).
    public var batteryPercent: Double?
    /// power-profiles-daemon's `ActiveProfile` is `power-saver`.
    public var powerSaver: Bool?
    /// logind's `IdleHint` of the user running the scheduler (every session of theirs is idle).
    public var idle: Bool?
    /// NetworkManager's `Connectivity` is full (4).
    public var network: Bool?
    /// NetworkManager's `Metered` is yes (1) or guess-yes (3).
    public var expensive: Bool?

    public init(onBattery: Bool? = nil, batteryPercent: Double? = nil, powerSaver: Bool? = nil,
                idle: Bool? = nil, network: Bool? = nil, expensive: Bool? = nil) {
        self.expensive = expensive
        self.onBattery = onBattery
        self.batteryPercent = batteryPercent
        self.powerSaver = powerSaver
        self.idle = idle
        self.network = network
    }

    /// Where each condition came from, by its name (`power`, `network`, `idle`, `lowpower`):
    /// `upower`, `power-profiles-daemon`, `logind`, `networkmanager`, or `files`; `lowpower`
    /// names both of what it combines (`power-profiles-daemon+upower`).
    public typealias Sources = [String: String]

    /// `files` with what the services said put in its place.
    public func merged(onto files: ConditionsProbe.Reading, lowPowerBatteryPercent: Int) -> (reading: ConditionsProbe.Reading, sources: Sources) {
        var reading = files
        var sources: Sources = [:]
        let powerSource: String
        if let onBattery {
            reading.conditions.externalPower = !onBattery
            reading.batteryPercent = batteryPercent.map { Int($0.rounded()) }
            powerSource = "upower"
        } else {
            powerSource = "files"
        }
        sources[Conditions.Name.power.rawValue] = powerSource
        // A critically low battery is low power whatever the profile, as the file probe has it.
        let batteryLow = !reading.conditions.externalPower
            && (reading.batteryPercent.map { $0 <= lowPowerBatteryPercent } ?? false)
        if let powerSaver {
            reading.conditions.lowPower = powerSaver || batteryLow
            sources[Conditions.Name.lowpower.rawValue] = "power-profiles-daemon+\(powerSource)"
        } else {
            reading.conditions.lowPower = batteryLow
            sources[Conditions.Name.lowpower.rawValue] = powerSource
        }
        if let idle {
            reading.conditions.idle = idle
            sources[Conditions.Name.idle.rawValue] = "logind"
        } else {
            sources[Conditions.Name.idle.rawValue] = "files"
        }
        if let network {
            reading.conditions.network = network
            sources[Conditions.Name.network.rawValue] = "networkmanager"
        } else {
            sources[Conditions.Name.network.rawValue] = "files"
        }
        // The files know nothing of metering: without NetworkManager no network is expensive.
        reading.conditions.expensive = expensive ?? false
        sources[Conditions.Name.expensive.rawValue] = expensive == nil ? "files" : "networkmanager"
        return (reading, sources)
    }
}
