import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Opening a file that must be a regular file, without ever blocking or following a link.
///
/// A FIFO put where a state file, a command, the event log or a manifest should be would block
/// `open(2)` (for writing: until a reader appears) and `read(2)` (until a writer does), hanging
/// the scheduler, `bgctl` and `bgtop`. `O_NONBLOCK` makes `open` return at once, and `fstat` on
/// the descriptor (not on the name, which could be swapped in between) refuses anything that is
/// not a regular file. On a regular file `O_NONBLOCK` has no effect.
public enum RegularFile {
    /// Opens `path` with `flags` plus `O_NONBLOCK|O_CLOEXEC` (and `O_NOFOLLOW` unless
    /// `followingLinks`), and returns the descriptor only when it is a regular file.
    ///
    /// Errors name the file and what it is instead: `X is a FIFO, not a regular file`,
    /// `X is a symbolic link; refusing to follow it`, or the system's reason.
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600,
                            followingLinks: Bool = false) throws(StateError) -> Int32 {
        let fd = Glibc.open(path, flags | O_NONBLOCK | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW), mode)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP, !followingLinks { throw .symbolicLink(path) }
            // Opening a directory for writing, or a FIFO for writing with no reader: say what it is.
            if code == EISDIR || code == ENXIO, let kind = kind(at: path, followingLinks: followingLinks) {
                throw .notRegularFile(path: path, kind: kind)
            }
            throw .system(operation: "cannot open", path: path, errno: code)
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .system(operation: "cannot stat", path: path, errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .notRegularFile(path: path, kind: name(ofKind: info.st_mode))
        }
        // A regular file: hand back an ordinary descriptor (children may inherit it).
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return fd
    }

    /// What is at `path` when it is not a regular file ("a FIFO", "a directory", ...); `nil` when
    /// it is a regular file or nothing is there.
    public static func kind(at path: String, followingLinks: Bool = false) -> String? {
        var info = stat()
        let found = followingLinks ? stat(path, &info) : lstat(path, &info)
        guard found == 0, info.st_mode & S_IFMT != S_IFREG else { return nil }
        return name(ofKind: info.st_mode)
    }

    /// A file type in words, with its article, for messages.
    public static func name(ofKind mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: return "a regular file"
        case S_IFDIR: return "a directory"
        case S_IFLNK: return "a symbolic link"
        case S_IFIFO: return "a FIFO"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        default: return "a file of unknown type"
        }
    }
}
