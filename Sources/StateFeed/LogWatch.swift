import FoundationEssentials
import Glibc
import TaskState

/// inotify on the log the pager shows, while it is open: a write, a truncation, or the log being
/// replaced (rotated) or removed wakes the dashboard; nothing polls. The `logs/` folder is watched
/// rather than the file, so a log that appears or is replaced is seen too.
public final class LogWatch {
    private let paths: StatePaths
    private var watcher: ChangeWatcher?
    public private(set) var app: Identifier?

    public init(paths: StatePaths) {
        self.paths = paths
    }

    /// The descriptor to poll; -1 while nothing is followed.
    public var descriptor: Int32 { watcher?.descriptor ?? -1 }

    /// Follows `app`'s log, or nothing; the inotify instance exists only while a log is followed.
    public func follow(_ app: Identifier?) {
        guard app != self.app else { return }
        self.app = app
        watcher = nil
        guard app != nil, let watcher = try? ChangeWatcher() else { return }
        let mask = ChangeWatcher.defaultMask | UInt32(IN_MODIFY)
        // No logs folder yet (no launch so far): watch for it in the state directory.
        if (try? watcher.watch(paths.logs, mask: mask)) == nil { try? watcher.watch(paths.root) }
        self.watcher = watcher
    }

    /// Drains inotify; whether the followed log changed.
    public func drain() -> Bool {
        guard let watcher, let app else { return false }
        var changed = false
        for change in watcher.drain() {
            if change.directory == paths.root && change.name == "logs" {
                try? watcher.watch(paths.logs, mask: ChangeWatcher.defaultMask | UInt32(IN_MODIFY))
                changed = true
            }
            if change.name == "\(app).log" || change.directory.isEmpty { changed = true }
        }
        return changed
    }
}
