import Foundation
import SchedulerCore
import StateFeed
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A state directory changed at random (seeded) one file at a time, as the scheduler would change
/// it, with the report inotify would give for each change and a ``StateMirror`` following it.
final class ChangingState {
    struct Change {
        var name: String
        var changes = StateChangeSet()
        /// The settings or manifests changed.
        var configuration = false
    }

    let root: String
    let paths: StatePaths
    let mirror: StateMirror
    private(set) var now = Date(timeIntervalSince1970: 1_795_341_600)
    private(set) var settings = SchedulerSettings()
    private(set) var catalog: ManifestCatalog
    /// The kinds of change made so far.
    private(set) var kinds: Set<String> = []
    private var random: SeededRandom
    private let apps: [Identifier] = (0..<6).map { try! Identifier(validating: "com.example.a\($0)") }

    init(seed: UInt64) throws {
        random = SeededRandom(seed: seed)
        root = FileManager.default.temporaryDirectory.path + "/bgtop-live-rows-\(seed)-\(UUID().uuidString.prefix(8))"
        paths = StatePaths(root: root)
        try StateDirectoryCheck.prepare(root)
        for directory in paths.directories { try StateFiles.ensureDirectory(directory) }
        for app in apps {
            for kind in [paths.requests, paths.tasks, paths.pushes] { try StateFiles.ensureDirectory("\(kind)/\(app)") }
        }
        settings.maxConcurrentLaunches = 2
        catalog = ManifestCatalog()
        for app in apps.prefix(4) { catalog.manifests[app] = Self.manifest(app) }
        mirror = StateMirror(paths: paths, tracksRequestChanges: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// One random change, written to the state directory.
    func step() throws -> Change {
        let change: Change
        switch random.below(100) {
        case 0..<30: change = try addRequest()
        case 30..<44: change = try removeRequest()
        case 44..<55: change = passTime()
        case 55..<62: change = try changeConditions()
        case 62..<72: change = try changeApp()
        case 72..<81: change = try changeTask()
        case 81..<88: change = try changePush()
        case 88..<94: change = try changeUsage()
        default: change = changeConfiguration()
        }
        kinds.insert(change.name)
        return change
    }

    func addRequest() throws -> Change {
        let app = apps[random.below(apps.count)]
        let identifier = try Identifier(validating: "job\(random.below(25))")
        // Whole minutes, so that many requests tie on their dates and the tie-breaks are tried.
        let earliest = random.below(4) == 0 ? nil : now.addingTimeInterval(60 * Double(random.below(36)) - 900)
        let request = PendingRequest(app: app, identifier: identifier, kind: random.below(2) == 0 ? .appRefresh : .processing,
                                     earliestBeginDate: earliest, requiresNetworkConnectivity: random.below(3) == 0,
                                     requiresExternalPower: random.below(4) == 0,
                                     submittedAt: now.addingTimeInterval(-60 * Double(random.below(10))))
        return try write(request, to: paths.request(request.key), named: "request")
    }

    /// Two due requests of each app with a manifest, in one report.
    func burst() throws -> Change {
        var burst = Change(name: "burst")
        for app in apps.prefix(4) {
            for index in 0..<2 {
                let request = PendingRequest(app: app, identifier: try Identifier(validating: "job\(index)"), kind: .appRefresh,
                                             earliestBeginDate: now.addingTimeInterval(-60), submittedAt: now.addingTimeInterval(-120))
                let path = paths.request(request.key)
                try StateFiles.write(try JSONFormat.encode(request), to: path, durable: false)
                burst.changes.add(directory: StateFiles.directoryName(of: path), name: "\(request.identifier).json",
                                  mask: UInt32(IN_CLOSE_WRITE), paths: paths, configApps: root + "/config/apps")
            }
        }
        return burst
    }

    /// The request's file written again as it is.
    func rewrite(_ key: TaskKey) throws -> Change {
        try write(mirror.request(key)!, to: paths.request(key), named: "request")
    }

    private func removeRequest() throws -> Change {
        let keys = Array(mirror.requestKeys).sorted()
        guard !keys.isEmpty else { return try addRequest() }
        return try remove(paths.request(keys[random.below(keys.count)]), named: "remove")
    }

    private func passTime() -> Change {
        now = now.addingTimeInterval(Double(1 + random.below(900)))
        return Change(name: "clock")
    }

    private func changeConditions() throws -> Change {
        let conditions = Conditions(externalPower: random.below(3) != 0, network: random.below(3) != 0, idle: random.below(3) != 0,
                                    lowPower: random.below(6) == 0, expensive: random.below(5) == 0)
        return try write(ConditionsRecord(probed: conditions, probedAt: now), to: paths.conditions, named: "conditions")
    }

    private func changeApp() throws -> Change {
        let app = apps[random.below(apps.count)]
        let throttled = random.below(3) == 0 ? now.addingTimeInterval(Double(10 + random.below(900))) : nil
        var record = AppRecord(id: app, enabled: random.below(7) != 0, throttledUntil: throttled)
        if random.below(2) == 0 { record.lastRefreshLaunchAt = now.addingTimeInterval(-Double(random.below(86_400))) }
        return try write(record, to: paths.app(app), named: "app")
    }

    private func changeTask() throws -> Change {
        let tasks = mirror.snapshot.tasks.map(\.key).sorted()
        if !tasks.isEmpty, random.below(2) == 0 { return try remove(paths.task(tasks[random.below(tasks.count)]), named: "task") }
        let requests = Array(mirror.requestKeys).sorted()
        guard !requests.isEmpty else { return try addRequest() }
        let key = requests[random.below(requests.count)]
        let pid = Int32(2000 + random.below(1000))
        let task = LaunchedTask(app: key.app, identifier: key.identifier, kind: .appRefresh, launchReason: "appRefresh", simulated: false,
                                pid: pid, processGroup: nil, processStartTicks: nil, launchID: "l\(pid)", startedAt: now,
                                deadline: now.addingTimeInterval(30))
        return try write(task, to: paths.task(key), named: "task")
    }

    private func changePush() throws -> Change {
        let pushes = mirror.snapshot.pushes.map(\.key).sorted()
        if !pushes.isEmpty, random.below(3) == 0 { return try remove(paths.push(pushes[random.below(pushes.count)]), named: "push") }
        // Named like requests, so that a push and a request of the same name tie.
        let push = HeldPush(app: apps[random.below(apps.count)], id: try Identifier(validating: "job\(random.below(25))"),
                            payload: .wakeUp, priority: random.below(2) == 0 ? .immediate : .conserve, receivedAt: now)
        return try write(push, to: paths.push(push.key), named: "push")
    }

    private func changeUsage() throws -> Change {
        let app = apps[random.below(apps.count)]
        if random.below(4) == 0 { return try remove(paths.usage(of: app), named: "usage") }
        let uses = Set((0..<(3 + random.below(40))).map { _ in now.addingTimeInterval(-Double(60 * random.below(30 * 24 * 60))) }).sorted()
        return try write(UsageHistory(app: app, uses: uses), to: paths.usage(of: app), named: "usage")
    }

    private func changeConfiguration() -> Change {
        switch random.below(4) {
        case 0: settings.maxConcurrentLaunches = 1 + random.below(3)
        case 1: settings.processingRecentUseDays = Double(random.below(3))
        case 2: settings.coalescingWindowSeconds = [0, 60, 600][random.below(3)]
        default:
            let app = apps[random.below(apps.count)]
            catalog.manifests[app] = catalog.manifests[app] == nil ? Self.manifest(app) : nil
        }
        return Change(name: "configuration", configuration: true)
    }

    private func write<T: Encodable>(_ value: T, to path: String, named name: String) throws -> Change {
        try StateFiles.write(try JSONFormat.encode(value), to: path, durable: false)
        return report(path, mask: UInt32(IN_CLOSE_WRITE), named: name)
    }

    private func remove(_ path: String, named name: String) throws -> Change {
        try StateFiles.remove(path)
        return report(path, mask: UInt32(IN_DELETE), named: name)
    }

    private func report(_ path: String, mask: UInt32, named name: String) -> Change {
        var change = Change(name: name)
        change.changes.add(directory: StateFiles.directoryName(of: path), name: String(path.split(separator: "/").last!), mask: mask,
                           paths: paths, configApps: root + "/config/apps")
        return change
    }

    private static func manifest(_ app: Identifier) -> AppManifest {
        AppManifest(id: app, executable: "/bin/true", permittedIdentifiers: [], backgroundModes: [.fetch, .processing])
    }
}

/// SplitMix64: the same sequence for the same seed on every machine.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<bound.
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
