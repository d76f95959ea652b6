import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Keeps `logs/<app>.log` from growing without end: when it has reached its cap, it becomes
/// `<app>.log.1` (the older ones move up one, the oldest beyond the count is removed) and the next
/// launch starts a new file.
///
/// Launched processes write to the log through their own descriptor (`O_APPEND`), so a file is
/// renamed only when no process of the app runs: renaming under a writer would leave it writing
/// into the rotated file, and truncating would lose what it writes meanwhile. A process's output
/// may so go past the cap during its run; its runtime budget bounds how far.
public enum AppLogRotation {
    /// What a rotation did.
    public enum Outcome: Equatable, Sendable {
        /// The log is under its cap (or absent): nothing was done.
        case notNeeded
        /// The log became `.1`; `removed` is the rotated file dropped beyond the count, if any.
        case rotated(removed: String?)
        /// It could not be done; the log is used as it is. One line saying why.
        case failed(String)
    }

    /// Rotates the log at `path` when it is a regular file of at least `maximumBytes`, keeping
    /// `kept` rotated files (`path.1` … `path.<kept>`). Links and other file types are never
    /// renamed or followed.
    public static func rotate(_ path: String, maximumBytes: Int, kept: Int) -> Outcome {
        var status = stat()
        guard lstat(path, &status) == 0 else { return .notNeeded }
        guard (status.st_mode & S_IFMT) == S_IFREG else { return .failed("\(path) is not a regular file; it is not rotated") }
        guard Int64(status.st_size) >= Int64(maximumBytes), kept >= 1 else { return .notNeeded }
        var removed: String?
        let oldest = "\(path).\(kept)"
        if lstat(oldest, &status) == 0 {
            guard unlink(oldest) == 0 else { return .failed("cannot remove \(oldest): \(String(cString: strerror(errno)))") }
            removed = oldest
        }
        for n in stride(from: kept - 1, through: 1, by: -1) {
            let from = "\(path).\(n)"
            guard lstat(from, &status) == 0 else { continue }
            guard rename(from, "\(path).\(n + 1)") == 0 else {
                return .failed("cannot rename \(from): \(String(cString: strerror(errno)))")
            }
        }
        guard rename(path, "\(path).1") == 0 else { return .failed("cannot rename \(path): \(String(cString: strerror(errno)))") }
        return .rotated(removed: removed)
    }
}
