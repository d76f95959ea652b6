import FoundationEssentials
import Glibc
import TaskState

/// inotify over the state directory and its per-app folders, so a change is on screen at once
/// without polling. New per-app folders are watched as they appear.
public final class StateWatch {
    public let watcher: ChangeWatcher
    private let paths: StatePaths
    private var watched: Set<String> = []

    /// The config's `apps/` folder: manifests decide the `noManifest` blocker.
    public let appsDirectory: String

    public init(paths: StatePaths, appsDirectory: String) throws {
        self.paths = paths
        self.appsDirectory = appsDirectory
        watcher = try ChangeWatcher()
        refreshWatches()
    }

    public var descriptor: Int32 { watcher.descriptor }

    /// Adds watches for folders that exist now and are not watched yet (the state directory may
    /// appear after the dashboard starts).
    public func refreshWatches() {
        let mask = ChangeWatcher.defaultMask | UInt32(IN_MODIFY)
        var wanted = [paths.root, paths.requests, paths.tasks, paths.transfers, paths.pushes, paths.usage, paths.apps, appsDirectory]
        // A state directory that does not exist yet: watch where it will appear.
        if !StateFiles.exists(paths.root) { wanted.append(StateFiles.directoryName(of: paths.root)) }
        for parent in [paths.requests, paths.tasks, paths.transfers, paths.pushes] {
            for name in (try? StateFiles.names(in: parent)) ?? [] { wanted.append("\(parent)/\(name)") }
        }
        for directory in wanted where !watched.contains(directory) {
            if (try? watcher.watch(directory, mask: mask)) != nil { watched.insert(directory) }
        }
        watched = watched.intersection(Set(watcher.watchedDirectories))
    }

    /// Drains pending changes; returns those that matter to the view.
    public func drain() -> [ChangeWatcher.Change] {
        let changes = watcher.drain()
        guard !changes.isEmpty else { return [] }
        // Only a folder appearing or going can call for a new watch; looking for new per-app
        // folders on every report would list them all for every commit.
        let folderMask = UInt32(IN_ISDIR | IN_Q_OVERFLOW | IN_DELETE_SELF | IN_MOVE_SELF)
        if changes.contains(where: { $0.directory.isEmpty || $0.mask & folderMask != 0 }) { refreshWatches() }
        // The scheduler's inbox and outcomes churn with every command; the view shows neither. In
        // the state directory's parent (watched only until it appears) only the directory matters.
        let parent = StateFiles.directoryName(of: paths.root)
        let name = String(paths.root.dropFirst(parent.count).drop { $0 == "/" })
        return changes.filter { change in
            if change.directory == parent && change.directory != paths.root { return change.name == name }
            return !change.name.hasPrefix(".") && change.name != "daemon.lock"
        }
    }
}
