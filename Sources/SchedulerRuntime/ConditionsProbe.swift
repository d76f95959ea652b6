import FoundationEssentials
import TaskState

/// Reads the machine's conditions from the kernel's files: power supplies, routes, load.
public struct ConditionsProbe: Sendable {
    /// Where `/sys` and `/proc` are (tests point these at fixture folders).
    public var sysRoot: String
    public var procRoot: String

    public init(sysRoot: String = "/sys", procRoot: String = "/proc") {
        self.sysRoot = sysRoot
        self.procRoot = procRoot
    }

    /// One reading of the machine.
    public struct Reading: Sendable, Equatable {
        public var conditions: Conditions
        public var batteryPercent: Int?
        public var loadAverage: Double?
    }

    public func read(idleLoadAverage: Double, lowPowerBatteryPercent: Int) -> Reading {
        let power = readPower()
        let load = readLoadAverage()
        let externalPower = power.externalPower
        let lowPower = !externalPower && (power.batteryPercent.map { $0 <= lowPowerBatteryPercent } ?? false)
        let conditions = Conditions(
            externalPower: externalPower, network: readNetwork(),
            idle: load.map { $0 < idleLoadAverage } ?? true, lowPower: lowPower)
        return Reading(conditions: conditions, batteryPercent: power.batteryPercent, loadAverage: load)
    }

    /// A machine with no battery is on external power; with one, it is when a mains or USB supply
    /// is online or the battery is not discharging.
    func readPower() -> (externalPower: Bool, batteryPercent: Int?) {
        let directory = "\(sysRoot)/class/power_supply"
        let supplies = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        var hasBattery = false
        var mainsOnline = false
        var discharging = false
        var percent: Int?
        for supply in supplies.sorted() {
            let base = "\(directory)/\(supply)"
            switch text("\(base)/type") {
            case "Battery":
                if text("\(base)/present") == "0" { continue }
                hasBattery = true
                if text("\(base)/status") == "Discharging" { discharging = true }
                if percent == nil, let capacity = text("\(base)/capacity").flatMap({ Int($0) }) { percent = capacity }
            case "Mains", "USB", "USB_C", "USB_PD":
                if text("\(base)/online") == "1" { mainsOnline = true }
            default:
                continue
            }
        }
        let external = !hasBattery || mainsOnline || !discharging
        return (external, percent)
    }

    /// A default route through an interface other than loopback whose link is up.
    func readNetwork() -> Bool {
        guard let table = text("\(procRoot)/net/route") else { return false }
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard fields.count > 2, fields[1] == "00000000" else { continue }
            let interface = String(fields[0])
            if interface == "lo" { continue }
            let state = text("\(sysRoot)/class/net/\(interface)/operstate") ?? "unknown"
            if state == "up" || state == "unknown" { return true }
        }
        return false
    }

    func readLoadAverage() -> Double? {
        text("\(procRoot)/loadavg")?.split(separator: " ").first.flatMap { Double($0) }
    }

    private func text(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmedWhitespace()
    }
}
