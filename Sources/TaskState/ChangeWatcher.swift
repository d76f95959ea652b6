import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// inotify over a set of directories: the way every reader and the scheduler learn of changes
/// without polling.
public final class ChangeWatcher {
    /// One change: which watched directory, and the name inside it (empty for the directory itself).
    public struct Change: Sendable, Hashable {
        public var directory: String
        public var name: String
        public var mask: UInt32
    }

    /// The descriptor to wait on with `poll`.
    public let descriptor: Int32
    private var directories: [Int32: String] = [:]

    /// The events watched by default: files appearing, changing, moving or going away.
    public static let defaultMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE
                                           | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    public init() throws(StateError) {
        descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw .system(operation: "cannot start inotify for", path: "watching", errno: errno) }
    }

    deinit { close(descriptor) }

    /// Watches a directory (not following a symbolic link). A folder watched before under the same
    /// path (since moved away, another folder now at the path) is no longer watched.
    public func watch(_ directory: String, mask: UInt32 = ChangeWatcher.defaultMask) throws(StateError) {
        let wd = inotify_add_watch(descriptor, directory, mask | UInt32(IN_DONT_FOLLOW))
        guard wd >= 0 else { throw .system(operation: "cannot watch", path: directory, errno: errno) }
        for (old, path) in directories where path == directory && old != wd {
            inotify_rm_watch(descriptor, old)
            directories[old] = nil
        }
        directories[wd] = directory
    }

    /// The directories watched now.
    public var watchedDirectories: [String] { Array(directories.values) }

    /// Reads every queued change without blocking.
    public func drain() -> [Change] {
        var changes: [Change] = []
        let size = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let n = read(descriptor, buffer, size)
            if n <= 0 { break }
            var offset = 0
            while offset < n {
                let event = (buffer + offset).assumingMemoryBound(to: inotify_event.self).pointee
                let nameStart = buffer + offset + MemoryLayout<inotify_event>.size
                let name = event.len > 0 ? String(cString: nameStart.assumingMemoryBound(to: CChar.self)) : ""
                if event.mask & UInt32(IN_IGNORED) != 0 {
                    directories[event.wd] = nil
                } else if let directory = directories[event.wd] {
                    changes.append(Change(directory: directory, name: name, mask: event.mask))
                } else if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                    changes.append(Change(directory: "", name: "", mask: event.mask))
                }
                offset += MemoryLayout<inotify_event>.size + Int(event.len)
            }
        }
        return changes
    }

    /// Blocks until the watcher has changes or `timeout` passes (`nil` waits forever).
    /// Returns whether changes are ready.
    public func wait(timeout: TimeInterval?) -> Bool {
        var poll = KernelPoll<Int32>()
        poll.watch(descriptor, descriptor)
        let milliseconds = timeout.map { Int32(max(0, min($0 * 1000, Double(Int32.max)))) } ?? -1
        return poll.wait(milliseconds: milliseconds)?.isEmpty == false
    }
}
