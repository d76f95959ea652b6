import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgbench conditions`' measurement: a private system bus with python-dbusmock's UPower,
/// power-profiles-daemon, NetworkManager and logind, the real `bgtaskd` told its address, and
/// `dbus-monitor` beside it. Each change is timed from just before `busctl` sets the property to
/// the peer printing its `PropertiesChanged`, and to `conditions.json` showing the new value.
struct ConditionsLatency {
    var workspace: Workspace
    var scheduler: String
    var tools: DesktopTools
    var changes: Int

    /// The samples, in seconds, each from the moment before `busctl` starts.
    struct Timings {
        /// To dbus-monitor's lines about the change.
        var peer: [Double] = []
        /// To `conditions.json` showing the new value.
        var scheduler: [Double] = []
        /// The scheduler's own share of each change (its time minus the peer's), by service.
        var share: [(service: String, seconds: Double)] = []
    }

    /// The logind session the scheduler follows: the mock's, of the user bgbench runs as.
    static let sessionPath = "/org/freedesktop/login1/session/c1"
    /// How long one change may take before the run stops with an error.
    static let changeTimeout = 10.0

    func run() throws -> Timings {
        let programs = SpawnedPrograms()
        // Ctrl-C: the bus and its mocks go too (bgtaskd is Interruption's own).
        Interruption.register { programs.endAll() }
        defer { programs.endAll() }
        let folder = try workspace.folder("bus")
        let bus = try MockSystemBus(folder: folder, tools: tools, programs: programs)
        defer { bus.stop() }
        try startServices(bus)
        let session = try SchedulerSession(workspace: workspace, name: "conditions", scheduler: scheduler,
                                           settings: ["conditionsRecheckSeconds": 3600], apps: [],
                                           environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address])
        defer { session.stop() }
        try waitUntil("bgtaskd to take every condition from the services (log: \(session.folder)/bgtaskd.log)",
                      timeout: 30, interval: 0.01) {
            guard session.isRunning else { throw BenchError("bgtaskd stopped: \(session.log)") }
            return Self.record(session.paths).map(Self.usesEveryService) ?? false
        }
        let monitor = try PropertiesMonitor(bus: bus, programs: programs, errorPath: "\(folder)/dbus-monitor.err")
        defer { monitor.stop() }
        try warmUp(bus, monitor)
        let watcher: ChangeWatcher
        do {
            watcher = try ChangeWatcher()
            try watcher.watch(session.paths.root, mask: UInt32(IN_MOVED_TO | IN_CLOSE_WRITE))
        } catch {
            throw BenchError("cannot watch \(session.paths.root): \(error)")
        }
        var timings = Timings()
        for change in DesktopChange.cycle(count: changes, sessionPath: Self.sessionPath) {
            let (peer, scheduler) = try measure(change, bus: bus, monitor: monitor, watcher: watcher, session: session)
            timings.peer.append(peer)
            timings.scheduler.append(scheduler)
            timings.share.append((change.service, scheduler - peer))
        }
        return timings
    }

    /// The four mocks, as they start: on mains power, the balanced profile, full connectivity
    /// on an unmetered (guess-no) network, and one busy session of this user.
    private func startServices(_ bus: MockSystemBus) throws {
        try bus.start("upower", parameters: ["OnBattery": false])
        try bus.start("power_profiles_daemon")
        try bus.start("networkmanager")
        let manager = "org.freedesktop.NetworkManager"
        // The template has no `Metered`: added before the scheduler starts, as NM_METERED_GUESS_NO.
        try bus.call([manager, "/org/freedesktop/NetworkManager", "org.freedesktop.DBus.Mock", "AddProperty",
                      "ssv", manager, "Metered", "u", "4"])
        try bus.start("logind")
        try bus.call(["org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "AddSession",
                      "ssusb", "c1", "seat0", "\(getuid())", "bgbench", "true"])
    }

    /// dbus-monitor prints nothing until it is subscribed: sets a property to the value it has
    /// until the monitor prints it, so that no measured change is missed.
    private func warmUp(_ bus: MockSystemBus, _ monitor: PropertiesMonitor) throws {
        let deadline = Self.now() + 20
        while Self.now() < deadline {
            try bus.call(["org.freedesktop.UPower", "/org/freedesktop/UPower", "org.freedesktop.DBus.Properties", "Set",
                          "ssv", "org.freedesktop.UPower", "OnBattery", "b", "false"])
            var descriptor = pollfd(fd: monitor.descriptor, events: Int16(POLLIN), revents: 0)
            if poll(&descriptor, 1, 200) > 0, try monitor.changedProperties().contains("OnBattery") { return }
        }
        throw BenchError("dbus-monitor printed nothing in 20 s (\(bus.log("dbus-monitor")))")
    }

    /// One change: the seconds from the start of `busctl` to the peer's lines, and to `conditions.json`.
    private func measure(_ change: DesktopChange, bus: MockSystemBus, monitor: PropertiesMonitor,
                         watcher: ChangeWatcher, session: SchedulerSession) throws -> (peer: Double, scheduler: Double) {
        // What is left of the change before (the scheduler's later writes) is not this one's.
        _ = watcher.drain()
        _ = try monitor.changedProperties()
        let start = Self.now()
        let setting = try bus.startSetting(change)
        var peerAt: Double?
        var schedulerAt: Double?
        var descriptors = [pollfd(fd: monitor.descriptor, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: watcher.descriptor, events: Int16(POLLIN), revents: 0)]
        let what = "\(change.service) \(change.property)=\(change.value)"
        while peerAt == nil || schedulerAt == nil {
            let left = start + Self.changeTimeout - Self.now()
            guard left > 0 else {
                bus.abandon(setting)
                let missing = peerAt == nil ? "dbus-monitor printed no PropertiesChanged"
                    : "conditions.json never showed \(change.condition.rawValue)=\(change.expected) (log: \(session.folder)/bgtaskd.log)"
                throw BenchError("\(what): \(missing) in \(Int(Self.changeTimeout)) s")
            }
            let ready = poll(&descriptors, 2, Int32(min(left, 1) * 1000) + 1)
            // Both sides are stamped when poll returns: the same wake-up cost on each.
            let woke = Self.now()
            if ready < 0 {
                if errno == EINTR { continue }
                throw BenchError("poll failed: \(String(cString: strerror(errno)))")
            }
            if descriptors[0].revents != 0, try monitor.changedProperties().contains(change.property), peerAt == nil {
                peerAt = woke
            }
            if descriptors[1].revents != 0 {
                _ = watcher.drain()
                if schedulerAt == nil, Self.record(session.paths)?.effective[change.condition] == change.expected {
                    schedulerAt = woke
                }
            }
            guard session.isRunning else { throw BenchError("bgtaskd stopped: \(session.log)") }
        }
        try bus.finish(setting, change)
        return (peerAt! - start, schedulerAt! - start)
    }

    /// Whether every condition comes from its desktop service, none from the files.
    private static func usesEveryService(_ record: ConditionsRecord) -> Bool {
        guard let sources = record.sources else { return false }
        return sources["power"] == "upower" && sources["lowpower"]?.hasPrefix("power-profiles-daemon") == true
            && sources["idle"] == "logind" && sources["network"] == "networkmanager" && sources["expensive"] == "networkmanager"
    }

    /// `conditions.json` as the scheduler last wrote it.
    private static func record(_ paths: StatePaths) -> ConditionsRecord? {
        guard let data = try? StateFiles.read(paths.conditions) else { return nil }
        return try? JSONFormat.decode(ConditionsRecord.self, from: data)
    }

    /// CLOCK_MONOTONIC in seconds.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
