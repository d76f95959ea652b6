import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The one-scheduler-per-state-directory lock: a POSIX write lock on `daemon.lock`.
///
/// The kernel drops the lock when the process dies, however it dies, so "is the scheduler up?"
/// is answered by asking who holds the lock; no heartbeat polling is needed.
public final class StateLock: Sendable {
    private let descriptor: Int32
    private let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        Self.heldHere.withLock { _ = $0.remove(path) }
        close(descriptor)
    }

    /// Why the lock could not be taken.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        case held(by: Int32, path: String)
        case state(StateError)

        public var description: String {
            switch self {
            case .held(let pid, let path):
                return "another bgtaskd (pid \(pid)) is already running for \(path)"
            case .state(let error):
                return error.description
            }
        }
    }

    /// Takes the lock or says who holds it.
    public static func acquire(_ paths: StatePaths) throws(Failure) -> StateLock {
        // Checked before opening: closing a second descriptor would drop the lock already held.
        if heldHere.withLock({ $0.contains(paths.lock) }) { throw .held(by: getpid(), path: paths.root) }
        // A FIFO, directory or link in place of the lock file is refused with its kind named.
        let fd: Int32
        do {
            fd = try RegularFile.open(paths.lock, O_RDWR | O_CREAT)
        } catch {
            throw .state(error)
        }

        var request = flock()
        request.l_type = Int16(F_WRLCK)
        request.l_whence = Int16(SEEK_SET)
        if fcntl(fd, F_SETLK, &request) != 0 {
            let code = errno
            close(fd)
            if code == EAGAIN || code == EACCES, let pid = holder(paths) {
                throw .held(by: pid, path: paths.root)
            }
            throw .state(.system(operation: "cannot lock", path: paths.lock, errno: code))
        }
        heldHere.withLock { _ = $0.insert(paths.lock) }
        return StateLock(descriptor: fd, path: paths.lock)
    }

    /// Lock files this process holds. POSIX locks belong to the process and any `close` of the
    /// file drops them, so ``holder(_:)`` must not open a file this process has locked.
    private static let heldHere = Mutex<Set<String>>([])

    /// The pid of the process holding the lock, or `nil` when no scheduler is running.
    public static func holder(_ paths: StatePaths) -> Int32? {
        if heldHere.withLock({ $0.contains(paths.lock) }) { return getpid() }
        // Never blocks: a FIFO in place of the lock must not hang `bgctl status`.
        guard let fd = try? RegularFile.open(paths.lock, O_RDONLY) else { return nil }
        defer { close(fd) }
        var query = flock()
        query.l_type = Int16(F_WRLCK)
        query.l_whence = Int16(SEEK_SET)
        guard fcntl(fd, F_GETLK, &query) == 0, query.l_type != Int16(F_UNLCK) else { return nil }
        return query.l_pid
    }
}
