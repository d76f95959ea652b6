import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where every file lives inside a state directory. See `docs/state-format.md`.
public struct StatePaths: Sendable, Hashable {
    public let root: String

    public init(root: String) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
    }

    public var lock: String { "\(root)/daemon.lock" }
    public var heartbeat: String { "\(root)/daemon.json" }
    /// The running scheduler's command socket (``CommandSocketClient``); absent when none runs.
    public var controlSocket: String { "\(root)/control.sock" }
    public var conditions: String { "\(root)/conditions.json" }
    public var journal: String { "\(root)/journal.json" }
    /// The processes the scheduler started and has not seen end (``ProcessLedger``).
    public var processes: String { "\(root)/processes.json" }
    /// What each running launch uses (``ResourceReport``), written by the resource monitor.
    public var resources: String { "\(root)/resources.json" }
    /// The scheduler's secret for launch tokens (``LaunchToken``); 0600, read by no one else.
    public var launchKey: String { "\(root)/launch.key" }
    public var requests: String { "\(root)/requests" }
    public var tasks: String { "\(root)/tasks" }
    public var apps: String { "\(root)/apps" }
    public var transfers: String { "\(root)/transfers" }
    /// Held background pushes, one folder per app (`pushes/<app>/<id>.json`).
    public var pushes: String { "\(root)/pushes" }
    /// The state of each app's push subscriptions (`subscriptions/<app>.json`), written by the
    /// scheduler's subscribers.
    public var subscriptions: String { "\(root)/subscriptions" }
    /// When a person used each app (`usage/<app>.json`), for usage prediction.
    public var usage: String { "\(root)/usage" }
    /// Finished downloads, in one folder per app (`downloads/<app>/`).
    public var downloads: String { "\(root)/downloads" }
    public var outcomes: String { "\(root)/outcomes" }
    public var inbox: String { "\(root)/inbox" }
    public var inboxTemporary: String { "\(root)/inbox/tmp" }
    public var inboxNew: String { "\(root)/inbox/new" }
    public var quarantine: String { "\(root)/quarantine" }
    public var logs: String { "\(root)/logs" }
    public var events: String { "\(root)/events.jsonl" }

    /// `events.1.jsonl` is the newest rotated log, `events.N.jsonl` the oldest kept.
    public func rotatedEvents(_ generation: Int) -> String { "\(root)/events.\(generation).jsonl" }

    public func request(_ key: TaskKey) -> String { "\(requests)/\(key.app)/\(key.identifier).json" }
    public func task(_ key: TaskKey) -> String { "\(tasks)/\(key.app)/\(key.identifier).json" }
    public func transfer(_ key: TaskKey) -> String { "\(transfers)/\(key.app)/\(key.identifier).json" }
    /// `transfers/<app>/<identifier>.progress`: the record as of its latest progress, written
    /// without a sync (see ``TransferRecord/newest(_:progressFile:)``).
    public func transferProgress(_ key: TaskKey) -> String { "\(transfers)/\(key.app)/\(key.identifier).progress" }
    /// `transfers/<app>/<identifier>.partial`: a download's bytes until it is whole.
    public func transferPartialData(_ key: TaskKey) -> String { "\(transfers)/\(key.app)/\(key.identifier).partial" }
    /// `transfers/<app>/<identifier>.partial.validator`: the validator of the representation the
    /// partial data holds, made durable before its first byte is written.
    public func transferPartialValidator(_ key: TaskKey) -> String { transferPartialData(key) + ".validator" }
    /// Whether a name in `transfers/<app>/` is a download's partial data or its validator, or an
    /// upload's kept answer (`.response`), which live beside the records but are not records.
    public static func isPartialDataName(_ name: String) -> Bool {
        name.hasSuffix(".partial") || name.hasSuffix(".partial.validator") || name.hasSuffix(".response")
    }
    /// `transfers/<app>/<identifier>.response`: the start of an upload's answer (its body), kept
    /// beside the transfer's record for the app that awaits it, and removed with the record.
    public func uploadResponseBody(_ key: TaskKey) -> String { "\(transfers)/\(key.app)/\(key.identifier).response" }
    public func push(_ key: TaskKey) -> String { "\(pushes)/\(key.app)/\(key.identifier).json" }
    public func subscriptions(of app: Identifier) -> String { "\(subscriptions)/\(app).json" }
    public func usage(of app: Identifier) -> String { "\(usage)/\(app).json" }
    public func app(_ id: Identifier) -> String { "\(apps)/\(id).json" }
    /// The app's own folder, where its finished downloads are moved.
    public func downloads(of app: Identifier) -> String { "\(downloads)/\(app)" }
    public func outcome(_ commandID: String) -> String { "\(outcomes)/\(commandID).json" }
    public func appLog(_ id: Identifier) -> String { "\(logs)/\(id).log" }
    /// `logs/<app>.log.<n>`: the `n`-th newest rotated log of the app (1 is the newest).
    public func rotatedAppLog(_ id: Identifier, _ n: Int) -> String { "\(appLog(id)).\(n)" }

    /// The folders the scheduler creates at start.
    public var directories: [String] {
        [root, requests, tasks, apps, transfers, pushes, subscriptions, usage, outcomes, inbox, inboxTemporary, inboxNew, quarantine, logs]
    }
}

/// Finds the state and config directories: flag, else environment, else XDG default.
public enum Locations {
    /// `--state DIR`, else `$BGTASK_STATE_DIR`, else `$XDG_STATE_HOME/bgtask` (`~/.local/state/bgtask`).
    public static func stateDirectory(flag: String?, environment: EnvironmentVariables = .process) -> String {
        if let flag, !flag.isEmpty { return absolute(flag) }
        if let value = environment["BGTASK_STATE_DIR"], !value.isEmpty { return absolute(value) }
        if let value = environment["XDG_STATE_HOME"], value.hasPrefix("/") { return "\(value)/bgtask" }
        return "\(home(environment))/.local/state/bgtask"
    }

    /// `--config DIR`, else `$BGTASK_CONFIG_DIR`, else `$XDG_CONFIG_HOME/bgtask` (`~/.config/bgtask`).
    public static func configDirectory(flag: String?, environment: EnvironmentVariables = .process) -> String {
        if let flag, !flag.isEmpty { return absolute(flag) }
        if let value = environment["BGTASK_CONFIG_DIR"], !value.isEmpty { return absolute(value) }
        if let value = environment["XDG_CONFIG_HOME"], value.hasPrefix("/") { return "\(value)/bgtask" }
        return "\(home(environment))/.config/bgtask"
    }

    /// ``stateDirectory(flag:environment:)`` with the variables as a dictionary.
    public static func stateDirectory(flag: String?, environment: [String: String]) -> String {
        stateDirectory(flag: flag, environment: EnvironmentVariables(environment))
    }

    /// ``configDirectory(flag:environment:)`` with the variables as a dictionary.
    public static func configDirectory(flag: String?, environment: [String: String]) -> String {
        configDirectory(flag: flag, environment: EnvironmentVariables(environment))
    }

    private static func home(_ environment: EnvironmentVariables) -> String {
        if let home = environment["HOME"], !home.isEmpty { return home }
        if let entry = getpwuid(getuid()), let dir = entry.pointee.pw_dir { return String(cString: dir) }
        return "/tmp"
    }

    private static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }
}

/// Checks that a state directory is the user's own and private.
public enum StateDirectoryCheck {
    /// Creates the directory (0700) when missing, then refuses it unless it is a real directory
    /// owned by the current user and closed to group and others.
    public static func prepare(_ path: String) throws(StateError) {
        var info = stat()
        if lstat(path, &info) != 0 {
            // ENOTDIR: a parent is in the way; creating says which.
            guard errno == ENOENT || errno == ENOTDIR else { throw .system(operation: "cannot stat", path: path, errno: errno) }
            try createWithParents(path)
            guard lstat(path, &info) == 0 else { throw .system(operation: "cannot stat", path: path, errno: errno) }
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            throw .unsafeDirectory("state directory \(path) is a symbolic link; point --state at the real directory")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .unsafeDirectory("state directory \(path) is not a directory")
        }
        guard info.st_uid == geteuid() else {
            throw .unsafeDirectory("state directory \(path) is owned by uid \(info.st_uid), not by you (uid \(geteuid()))")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw .unsafeDirectory("state directory \(path) is open to group or others (mode \(String(printf: "%04o", UInt32(mode)))); run: chmod 700 \(path)")
        }
    }

    private static func createWithParents(_ path: String) throws(StateError) {
        // Parents get the usual 0755 minus umask; only the state directory itself must be private.
        try DirectoryCreation.create(path, mode: 0o700, parentMode: 0o755, named: "state directory")
    }
}
