import FoundationEssentials
import SchedulerCore
import TaskState

/// The lines of `bgctl watch --json` (see `docs/cli.md#bgctl-watch`): each one JSON object on one
/// line with a `type`. The watch writes a ``FeedSnapshot`` first, then a ``FeedChange`` whenever
/// the state directory changes, a ``FeedResult``, ``FeedLog`` or ``FeedError`` for each request
/// line it reads (``FeedRequest``), and a ``FeedLogChanged`` whenever the followed log changes.
public enum WatchFeed {
    /// The `version` of the snapshot line. A reader refuses a feed with a version it does not know.
    public static let version = 1
    /// The longest request line read, newline included; a longer one is refused and skipped.
    public static let maximumRequestLine = 64 * 1024
    /// The longest line a reader of the feed accepts: a snapshot of a large state directory is
    /// one line, so this is generous, but bounded.
    public static let maximumFeedLine = 512 << 20
}

/// A record's place: the app and identifier of a request, task, transfer or held push.
public struct FeedKey: Codable, Hashable, Sendable {
    public var app: Identifier
    public var identifier: Identifier

    public init(_ key: TaskKey) {
        app = key.app
        identifier = key.identifier
    }

    public var taskKey: TaskKey { TaskKey(app: app, identifier: identifier) }
}

/// A state file that could not be used, as the watch saw it.
public struct FeedUnreadable: Codable, Hashable, Sendable {
    public var path: String
    public var reason: String

    public init(_ file: StateSnapshot.UnreadableFile) {
        path = file.path
        reason = file.reason
    }

    public var file: StateSnapshot.UnreadableFile { StateSnapshot.UnreadableFile(path: path, reason: reason) }
}

/// The first line: everything a dashboard needs to draw the state directory, including the
/// settings and manifests the scheduler's policy uses to work out why requests wait.
public struct FeedSnapshot: Codable, Sendable {
    public var type = "snapshot"
    public var version = WatchFeed.version
    public var stateDirectory: String
    public var configDirectory: String
    /// The pid holding the state lock (the scheduler, on the watched machine); absent when none runs.
    public var schedulerPID: Int32?
    /// What keeps the state directory from being read (it does not exist yet, no permission).
    public var directoryProblem: String?
    public var requests: [PendingRequest]
    public var tasks: [LaunchedTask]
    public var transfers: [TransferRecord]
    public var apps: [AppRecord]
    public var pushes: [HeldPush]
    public var usage: [UsageHistory]
    public var conditions: ConditionsRecord?
    public var heartbeat: DaemonHeartbeat?
    /// The resource monitor's last sample (`resources.json`); absent when there is none.
    public var resources: ResourceReport?
    public var unreadable: [FeedUnreadable]
    /// The newest events, oldest first (as many as the dashboard keeps).
    public var events: [Event]
    public var settings: SchedulerSettings
    public var manifests: [AppManifest]
    public var manifestProblems: [ManifestProblem]
}

/// What changed since the previous line. Every field but `type` is absent when its part did not
/// change; `cleared` names the single values (`schedulerPID`, `directoryProblem`, `conditions`,
/// `heartbeat`, `resources`) that are now absent.
public struct FeedChange: Codable, Sendable {
    /// Records written (new or changed) and records gone.
    public struct Records<Record: Codable & Sendable, Key: Codable & Sendable>: Codable, Sendable {
        public var set: [Record]
        public var removed: [Key]
    }

    public var type = "change"
    public var schedulerPID: Int32?
    public var directoryProblem: String?
    public var requests: Records<PendingRequest, FeedKey>?
    public var tasks: Records<LaunchedTask, FeedKey>?
    public var transfers: Records<TransferRecord, FeedKey>?
    public var apps: Records<AppRecord, Identifier>?
    public var pushes: Records<HeldPush, FeedKey>?
    public var usage: Records<UsageHistory, Identifier>?
    public var conditions: ConditionsRecord?
    public var heartbeat: DaemonHeartbeat?
    /// The resource monitor's whole sample, when it changed.
    public var resources: ResourceReport?
    /// The whole list of unreadable files, when it changed.
    public var unreadable: [FeedUnreadable]?
    /// Events appended to the log, oldest first; with `eventsReplaced`, the whole list instead.
    public var events: [Event]?
    public var eventsReplaced: Bool?
    public var settings: SchedulerSettings?
    public var manifests: [AppManifest]?
    public var manifestProblems: [ManifestProblem]?
    public var cleared: [String]?

    public init() {}

    /// Whether the line would say nothing.
    public var isEmpty: Bool {
        schedulerPID == nil && directoryProblem == nil && requests == nil && tasks == nil && transfers == nil
            && apps == nil && pushes == nil && usage == nil && conditions == nil && heartbeat == nil && resources == nil
            && unreadable == nil && events == nil && settings == nil && manifests == nil && (cleared ?? []).isEmpty
    }
}

/// The answer to a `command` request: what became of the command, as `bgctl` would report it.
public struct FeedResult: Codable, Hashable, Sendable {
    /// How the command ended.
    public enum Status: String, Codable, Sendable {
        /// The scheduler applied it; `message` says what it did.
        case applied
        /// The scheduler (or, with none running, the check `bgctl` makes) refused it; see `error`.
        case refused
        /// No scheduler runs: the command waits in the inbox for the next one.
        case queued
        /// The scheduler did not answer in time; the command stays in the inbox.
        case noAnswer
    }

    public var type = "result"
    /// The request's `id`, when it had one.
    public var id: String?
    public var status: Status
    public var message: String?
    public var error: CommandOutcome.Refusal?

    public init(id: String?, status: Status, message: String? = nil, error: CommandOutcome.Refusal? = nil) {
        self.id = id
        self.status = status
        self.message = message
        self.error = error
    }
}

/// A request line that was not carried out, and why; the watch goes on with the next line.
public struct FeedError: Codable, Hashable, Sendable, Error {
    /// What was wrong, in a word a program can test.
    public enum Code: String, Codable, Sendable {
        /// Longer than ``WatchFeed/maximumRequestLine``.
        case tooLong
        /// Not a JSON object, no `type`, a field of the wrong kind, a command that does not decode.
        case malformed
        /// A `type` this watch does not serve.
        case unknownType
        /// A well-formed command `bgctl` would not send (out of bounds, not a verb of bgctl).
        case refused
        /// Too many commands already waiting for the scheduler.
        case busy
    }

    public var type = "error"
    /// The request's `id`, when it could be read.
    public var id: String?
    public var code: Code
    /// One line: what was wrong.
    public var message: String

    public init(id: String? = nil, code: Code, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }
}

/// The answer to a `log` request: the part of the app's log it asked for.
public struct FeedLog: Codable, Hashable, Sendable {
    public var type = "log"
    /// The request's `id`, when it had one.
    public var id: String?
    public var excerpt: LogExcerpt

    public init(id: String?, excerpt: LogExcerpt) {
        self.id = id
        self.excerpt = excerpt
    }
}

/// The followed app's log was written, truncated or replaced (after a `follow` request).
public struct FeedLogChanged: Codable, Hashable, Sendable {
    public var type = "logChanged"
    public var app: Identifier

    public init(app: Identifier) {
        self.app = app
    }
}
