import FoundationEssentials

/// Everything in a state directory, read at one moment: what `bgctl list`, `bgtop` and the
/// scheduler at start-up see.
public struct StateSnapshot: Sendable {
    /// A state file that could not be used, and why. The scheduler quarantines these.
    public struct UnreadableFile: Sendable, Hashable {
        public var path: String
        public var reason: String

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    public var requests: [PendingRequest] = []
    public var tasks: [LaunchedTask] = []
    public var apps: [AppRecord] = []
    public var transfers: [TransferRecord] = []
    public var pushes: [HeldPush] = []
    public var subscriptions: [SubscriptionStatus] = []
    public var usage: [UsageHistory] = []
    public var conditions: ConditionsRecord?
    public var heartbeat: DaemonHeartbeat?
    public var processes: ProcessLedger?
    /// The resource monitor's last sample (`resources.json`), if any.
    public var resources: ResourceReport?
    public var unreadable: [UnreadableFile] = []

    public init() {}

    /// Reads the state directory. Missing folders are empty; bad files are listed in `unreadable`.
    public static func load(_ paths: StatePaths) -> StateSnapshot {
        var snapshot = StateSnapshot()
        snapshot.requests = snapshot.loadPerApp(paths.requests, as: PendingRequest.self) { $0.key }
        snapshot.tasks = snapshot.loadPerApp(paths.tasks, as: LaunchedTask.self) { $0.key }
        snapshot.transfers = snapshot.loadPerApp(paths.transfers, as: TransferRecord.self) { $0.key }
            .map { TransferRecord.newest($0, progressFile: paths.transferProgress($0.key)) }
        snapshot.pushes = snapshot.loadPerApp(paths.pushes, as: HeldPush.self) { $0.key }
        snapshot.apps = snapshot.loadFlat(paths.apps, as: AppRecord.self) { $0.id }
        snapshot.subscriptions = snapshot.loadFlat(paths.subscriptions, as: SubscriptionStatus.self) { $0.app }
        snapshot.usage = snapshot.loadFlat(paths.usage, as: UsageHistory.self) { $0.app }
        snapshot.conditions = snapshot.loadOptional(paths.conditions, as: ConditionsRecord.self)
        snapshot.heartbeat = snapshot.loadOptional(paths.heartbeat, as: DaemonHeartbeat.self)
        snapshot.processes = snapshot.loadOptional(paths.processes, as: ProcessLedger.self)
        snapshot.resources = snapshot.loadOptional(paths.resources, as: ResourceReport.self)
        return snapshot
    }

    private mutating func loadPerApp<T: Decodable>(_ directory: String, as type: T.Type,
                                                    key: (T) -> TaskKey) -> [T] {
        var values: [T] = []
        for appName in names(directory) {
            let appDirectory = "\(directory)/\(appName)"
            guard let app = try? Identifier(validating: appName) else {
                unreadable.append(UnreadableFile(path: appDirectory, reason: "'\(appName)' is not a valid app identifier"))
                continue
            }
            // Partial downloads and progress live beside their transfer's file.
            for name in names(appDirectory) where !StatePaths.isPartialDataName(name) && !name.hasSuffix(".progress") {
                let path = "\(appDirectory)/\(name)"
                guard let value = decodeFile(path, as: type) else { continue }
                let expected = "\(key(value).identifier).json"
                if key(value).app != app || name != expected {
                    unreadable.append(UnreadableFile(path: path, reason: "contents name \(key(value)), which belongs elsewhere"))
                    continue
                }
                values.append(value)
            }
        }
        return values
    }

    private mutating func loadFlat<T: Decodable>(_ directory: String, as type: T.Type, id: (T) -> Identifier) -> [T] {
        var values: [T] = []
        for name in names(directory) {
            let path = "\(directory)/\(name)"
            guard let value = decodeFile(path, as: type) else { continue }
            guard name == "\(id(value)).json" else {
                unreadable.append(UnreadableFile(path: path, reason: "contents name \(id(value)), which belongs elsewhere"))
                continue
            }
            values.append(value)
        }
        return values
    }

    private mutating func loadOptional<T: Decodable>(_ path: String, as type: T.Type) -> T? {
        guard StateFiles.exists(path) else { return nil }
        return decodeFile(path, as: type)
    }

    private mutating func names(_ directory: String) -> [String] {
        do {
            return try StateFiles.names(in: directory)
        } catch {
            unreadable.append(UnreadableFile(path: directory, reason: error.description))
            return []
        }
    }

    private mutating func decodeFile<T: Decodable>(_ path: String, as type: T.Type) -> T? {
        do {
            return try JSONFormat.decode(type, from: try StateFiles.read(path))
        } catch {
            unreadable.append(UnreadableFile(path: path, reason: error.description))
            return nil
        }
    }
}
