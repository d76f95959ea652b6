import FoundationEssentials

/// The machine conditions that gate launches.
public struct Conditions: Codable, Hashable, Sendable {
    /// On mains power (a machine without a battery always is).
    public var externalPower: Bool
    /// A non-loopback interface is up and there is a default route.
    public var network: Bool
    /// The load average is under the configured threshold.
    public var idle: Bool
    /// On battery at or under the low-power threshold.
    public var lowPower: Bool
    /// The network is metered (NetworkManager's `Metered`): transfers and requests that do not
    /// allow expensive network access wait. Absent from older files: false.
    public var expensive: Bool

    public init(externalPower: Bool = true, network: Bool = true, idle: Bool = true, lowPower: Bool = false,
                expensive: Bool = false) {
        self.externalPower = externalPower
        self.network = network
        self.idle = idle
        self.lowPower = lowPower
        self.expensive = expensive
    }

    private enum CodingKeys: String, CodingKey {
        case externalPower, network, idle, lowPower, expensive
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        externalPower = try container.decode(Bool.self, forKey: .externalPower)
        network = try container.decode(Bool.self, forKey: .network)
        idle = try container.decode(Bool.self, forKey: .idle)
        lowPower = try container.decode(Bool.self, forKey: .lowPower)
        expensive = try container.decodeIfPresent(Bool.self, forKey: .expensive) ?? false
    }

    /// The conditions, one by one, in display order.
    public enum Name: String, Codable, Sendable, CaseIterable {
        case power, network, idle, lowpower, expensive
    }

    public subscript(name: Name) -> Bool {
        get {
            switch name {
            case .power: return externalPower
            case .network: return network
            case .idle: return idle
            case .lowpower: return lowPower
            case .expensive: return expensive
            }
        }
        set {
            switch name {
            case .power: externalPower = newValue
            case .network: network = newValue
            case .idle: idle = newValue
            case .lowpower: lowPower = newValue
            case .expensive: expensive = newValue
            }
        }
    }
}

/// Test overrides set with `bgctl conditions set`; `nil` fields follow the probed value.
public struct ConditionOverrides: Codable, Hashable, Sendable {
    public var externalPower: Bool?
    public var network: Bool?
    public var idle: Bool?
    public var lowPower: Bool?
    public var expensive: Bool?

    public init(externalPower: Bool? = nil, network: Bool? = nil, idle: Bool? = nil, lowPower: Bool? = nil,
                expensive: Bool? = nil) {
        self.externalPower = externalPower
        self.network = network
        self.idle = idle
        self.lowPower = lowPower
        self.expensive = expensive
    }

    public subscript(name: Conditions.Name) -> Bool? {
        get {
            switch name {
            case .power: return externalPower
            case .network: return network
            case .idle: return idle
            case .lowpower: return lowPower
            case .expensive: return expensive
            }
        }
        set {
            switch name {
            case .power: externalPower = newValue
            case .network: network = newValue
            case .idle: idle = newValue
            case .lowpower: lowPower = newValue
            case .expensive: expensive = newValue
            }
        }
    }

    /// These overrides applied on top of `probed`.
    public func applied(to probed: Conditions) -> Conditions {
        var result = probed
        for name in Conditions.Name.allCases {
            if let value = self[name] { result[name] = value }
        }
        return result
    }

    public var isEmpty: Bool { Conditions.Name.allCases.allSatisfy { self[$0] == nil } }

    /// Merges `other` in: its set fields win.
    public func merging(_ other: ConditionOverrides) -> ConditionOverrides {
        var result = self
        for name in Conditions.Name.allCases {
            if let value = other[name] { result[name] = value }
        }
        return result
    }
}

/// `conditions.json`: what the scheduler measured, what a person overrode, and what it uses.
public struct ConditionsRecord: Codable, Hashable, Sendable {
    public var probed: Conditions
    public var overrides: ConditionOverrides
    /// What the scheduler decides with: `probed` with `overrides` applied.
    public var effective: Conditions
    /// Battery charge in percent, when there is a battery.
    public var batteryPercent: Int?
    /// The one-minute load average at the last probe.
    public var loadAverage: Double?
    public var probedAt: Date
    /// Where each probed condition came from, by name (`power`, `network`, `idle`, `lowpower`):
    /// `upower`, `power-profiles-daemon`, `logind`, `networkmanager`, or `files` (the kernel's);
    /// absent from schedulers that read only the files.
    public var sources: [String: String]?

    public init(probed: Conditions, overrides: ConditionOverrides = ConditionOverrides(),
                batteryPercent: Int? = nil, loadAverage: Double? = nil, probedAt: Date) {
        self.probed = probed
        self.overrides = overrides
        self.effective = overrides.applied(to: probed)
        self.batteryPercent = batteryPercent
        self.loadAverage = loadAverage
        self.probedAt = probedAt
    }

    /// Whether `name` is overridden (shown as simulated).
    public func isSimulated(_ name: Conditions.Name) -> Bool { overrides[name] != nil }

    /// Whether `name` rests on the kernel's files, which announce no change: something waiting
    /// on it needs a timed re-probe. Overridden conditions and conditions a desktop service
    /// announces (``sources``) do not.
    public func isProbedFromFiles(_ name: Conditions.Name) -> Bool {
        !isSimulated(name) && (sources?[name.rawValue] ?? "files").split(separator: "+").contains("files")
    }
}
