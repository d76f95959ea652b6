import CSystemd
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The machine's conditions as the desktop's own services announce them on the system bus:
/// UPower, power-profiles-daemon, logind and NetworkManager.
///
/// Nothing polls: the scheduler's `poll` watches the bus (``pollRequest``), and each turn hands
/// it what arrived (``process()``). A `PropertiesChanged` or `NameOwnerChanged` of a service
/// marks it stale; it is then read again with `Get` (so a restart, a departure or a value of the
/// wrong type all take the same path). Values never come from a signal's body: any client of the
/// bus may send a signal, only the owner of the service's name answers `Get`. A service that is absent or answers nonsense gives `nil`
/// values: the kernel's files decide those conditions (``DesktopReading/merged(onto:lowPowerBatteryPercent:)``).
final class DesktopConditionSource {
    /// The services read, each with the bus names that may carry it and the interfaces whose
    /// `PropertiesChanged` make it stale.
    enum Service: String, CaseIterable {
        case upower
        case powerProfiles = "power-profiles-daemon"
        case logind
        case networkManager = "networkmanager"

        var busNames: [String] {
            switch self {
            case .upower: return ["org.freedesktop.UPower"]
            // The daemon's old name and the name it has under UPower since 0.30.
            case .powerProfiles: return ["net.hadess.PowerProfiles", "org.freedesktop.UPower.PowerProfiles"]
            case .logind: return ["org.freedesktop.login1"]
            case .networkManager: return ["org.freedesktop.NetworkManager"]
            }
        }

        /// Signals of the service itself that make it stale (a session came or went).
        var signals: [String] {
            self == .logind ? ["SessionNew", "SessionRemoved"] : []
        }

        var interfaces: [String] {
            switch self {
            case .upower: return ["org.freedesktop.UPower", "org.freedesktop.UPower.Device"]
            case .powerProfiles: return ["net.hadess.PowerProfiles", "org.freedesktop.UPower.PowerProfiles"]
            case .logind: return ["org.freedesktop.login1.Session"]
            case .networkManager: return ["org.freedesktop.NetworkManager"]
            }
        }
    }

    private let bus: DesktopBus
    /// What the services said, as of the last ``process()``.
    private(set) var reading = DesktopReading()
    /// Each service's state in words (`"org.freedesktop.UPower"` or why it is not used), to
    /// report a change once, not at every read.
    private(set) var status: [Service: String] = [:]
    /// Services to read again once the messages in hand are handled.
    private var stale: Set<Service> = Set(Service.allCases)
    /// Lines to log: the connection lost, a service that came, went or sent nonsense.
    private(set) var notes: [String] = []
    /// logind's delay inhibitor, so that the state is written before the machine sleeps.
    let sleep: SleepInhibitor
    /// logind's `PrepareForSleep` arrived: its `PreparingForSleep` property is read again (a
    /// signal's body is not believed: any client may send one, even straight to this connection).
    private var sleepStale = false

    /// Connects to the system bus and subscribes to the services' signals. Throws when there is
    /// no system bus; the caller keeps today's file probes.
    /// `holdsSleepInhibitor`: take logind's delay inhibitor for sleep (not for a scheduler on a
    /// thread of another program, the demo's, which must not hold off the user's suspend).
    init(holdsSleepInhibitor: Bool = true) throws(DesktopBus.Failure) {
        sleep = SleepInhibitor(enabled: holdsSleepInhibitor)
        bus = try DesktopBus()
        let context = Unmanaged.passUnretained(self).toOpaque()
        let handler: sd_bus_message_handler_t = { message, context, _ in
            guard let context else { return 0 }
            Unmanaged<DesktopConditionSource>.fromOpaque(context).takeUnretainedValue().received(message)
            return 0
        }
        for service in Service.allCases {
            for name in service.busNames {
                try bus.addMatch("type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                 + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'",
                                 handler: handler, context: context)
            }
            for member in service.signals {
                try bus.addMatch("type='signal',sender='\(service.busNames[0])',member='\(member)'",
                                 handler: handler, context: context)
            }
            for interface in service.interfaces {
                try bus.addMatch("type='signal',interface='org.freedesktop.DBus.Properties',"
                                 + "member='PropertiesChanged',arg0='\(interface)'",
                                 handler: handler, context: context)
            }
        }
        // The signal only says "look again": the property is read from logind itself.
        try bus.addMatch("type='signal',sender='org.freedesktop.login1',path='/org/freedesktop/login1',"
                         + "interface='org.freedesktop.login1.Manager',member='PrepareForSleep'",
                         handler: handler, context: context)
        _ = process()
    }

    /// What the scheduler's `poll` watches for the bus; `nil` once the connection is lost.
    var pollRequest: (descriptor: Int32, events: Int16, milliseconds: Int32)? { bus.pollRequest }

    /// Handles what the bus sent and reads stale services again. Returns whether ``reading``
    /// changed. A lost connection leaves every condition to the files, for good.
    func process() -> Bool {
        let before = reading
        guard bus.isOpen else { return false }
        do {
            // Reads leave signals that came meanwhile in sd-bus's queue: handle them, until no
            // service is stale.
            try bus.processAll()
            while !stale.isEmpty {
                let services = stale
                stale = []
                for service in Service.allCases where services.contains(service) { read(service) }
                try bus.processAll()
            }
            if sleepStale {
                sleepStale = false
                readPreparingForSleep()
            }
            if let note = sleep.takeIfWanted(bus) { notes.append(note) }
        } catch {
            bus.close()
            sleep.release()
            reading = DesktopReading()
            notes.append("lost the system bus (\(error)); conditions from the kernel's files")
        }
        return reading != before
    }

    /// Takes the notes to log.
    func takeNotes() -> [String] {
        defer { notes.removeAll() }
        return notes
    }

    /// A match handler's message: a service came, went or changed something.
    private func received(_ message: OpaquePointer?) {
        if DesktopBus.member(of: message) == "PrepareForSleep" {
            sleepStale = true
            return
        }
        guard let member = DesktopBus.member(of: message), let first = DesktopBus.firstString(of: message) else { return }
        if member == "NameOwnerChanged" && Service.logind.busNames.contains(first) {
            sleep.logindChanged()
            sleepStale = true
        }
        for service in Service.allCases {
            if service.signals.contains(member) { stale.insert(service) }
            let names = member == "NameOwnerChanged" ? service.busNames : service.interfaces
            if names.contains(first) { stale.insert(service) }
        }
    }

    // MARK: - Reading the services

    private func read(_ service: Service) {
        let outcome: Result<String, DesktopBus.Failure>
        switch service {
        case .upower: outcome = readUPower()
        case .powerProfiles: outcome = readPowerProfiles()
        case .logind: outcome = readLogind()
        case .networkManager: outcome = readNetworkManager()
        }
        let words: String
        switch outcome {
        case .success(let name): words = "from \(name)"
        case .failure(let failure): words = "not used (\(failure))"
        }
        if status[service] != words {
            status[service] = words
            notes.append("\(service.rawValue): \(words)")
        }
    }

    /// logind's `PreparingForSleep`: true from its `PrepareForSleep(true)` until the resume.
    private func readPreparingForSleep() {
        guard case .success(let preparing) = bus.bool("org.freedesktop.login1", "/org/freedesktop/login1",
                                                      "org.freedesktop.login1.Manager", "PreparingForSleep"),
              preparing != sleep.sleepAnnounced else { return }
        sleep.announced(preparing)
    }

    private func readUPower() -> Result<String, DesktopBus.Failure> {
        let name = "org.freedesktop.UPower"
        switch bus.bool(name, "/org/freedesktop/UPower", name, "OnBattery") {
        case .failure(let failure):
            reading.onBattery = nil
            reading.batteryPercent = nil
            return .failure(failure)
        case .success(let onBattery):
            reading.onBattery = onBattery
        }
        // The display device stands for all batteries; one that is not present means none.
        let device = "/org/freedesktop/UPower/devices/DisplayDevice"
        let interface = "org.freedesktop.UPower.Device"
        if case .success(true) = bus.bool(name, device, interface, "IsPresent"),
           case .success(let percent) = bus.double(name, device, interface, "Percentage"),
           percent.isFinite, (0...100).contains(percent) {
            reading.batteryPercent = percent
        } else {
            reading.batteryPercent = nil
        }
        return .success(name)
    }

    private func readPowerProfiles() -> Result<String, DesktopBus.Failure> {
        var last = DesktopBus.Failure(description: "absent")
        for (name, path) in [("net.hadess.PowerProfiles", "/net/hadess/PowerProfiles"),
                             ("org.freedesktop.UPower.PowerProfiles", "/org/freedesktop/UPower/PowerProfiles")] {
            switch bus.string(name, path, name, "ActiveProfile") {
            case .success(let profile):
                reading.powerSaver = profile == "power-saver"
                return .success(name)
            case .failure(let failure):
                last = failure
            }
        }
        reading.powerSaver = nil
        return .failure(last)
    }

    private func readLogind() -> Result<String, DesktopBus.Failure> {
        let name = "org.freedesktop.login1"
        // A user service runs outside any session, so not "its" session: the person is away when
        // every session of theirs is idle (as logind's own user `IdleHint` has it).
        let ours: [String]
        switch bus.sessions() {
        case .success(let sessions): ours = sessions.filter { $0.uid == getuid() }.map(\.path)
        case .failure(let failure):
            reading.idle = nil
            return .failure(failure)
        }
        guard !ours.isEmpty else {
            reading.idle = nil
            return .failure(DesktopBus.Failure(description: "no session of user \(getuid())"))
        }
        var idle = true
        for path in ours {
            switch bus.bool(name, path, "org.freedesktop.login1.Session", "IdleHint") {
            case .success(let hint): idle = idle && hint
            case .failure(let failure):
                reading.idle = nil
                return .failure(failure)
            }
        }
        reading.idle = idle
        return .success(name)
    }

    private func readNetworkManager() -> Result<String, DesktopBus.Failure> {
        let name = "org.freedesktop.NetworkManager"
        switch bus.uint32(name, "/org/freedesktop/NetworkManager", name, "Connectivity") {
        case .success(let connectivity):
            // NM_CONNECTIVITY_FULL; 0 (unknown) says nothing, so the files decide.
            guard connectivity != 0 else {
                reading.network = nil
                reading.expensive = nil
                return .failure(DesktopBus.Failure(description: "connectivity unknown"))
            }
            reading.network = connectivity == 4
            // NMMetered: 1 yes, 3 guess-yes; 2 no, 4 guess-no, 0 unknown. An older NetworkManager
            // without the property leaves it unknown.
            if case .success(let metered) = bus.uint32(name, "/org/freedesktop/NetworkManager", name, "Metered") {
                reading.expensive = metered == 1 || metered == 3
            } else {
                reading.expensive = nil
            }
            return .success(name)
        case .failure(let failure):
            reading.network = nil
            reading.expensive = nil
            return .failure(failure)
        }
    }
}
