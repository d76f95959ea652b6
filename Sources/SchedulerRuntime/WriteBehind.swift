import CLinuxSupport
import Dispatch
import FoundationEssentials
import TaskState
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Flushes the state directory's file system shortly after commits, from a thread of its own, so
/// that the loop never waits for it.
///
/// Durability does not depend on it: a commit is durable once its journal record is synced, and a
/// checkpoint syncs again before it empties the journal. It keeps the file system's own state
/// cheap to work with. On ext4 without a jbd2 journal, an inode freed while its inode-table block
/// is dirty counts as recently deleted for five minutes more (`recently_deleted` in
/// `fs/ext4/ialloc.c`), and every inode allocation steps over each such inode: with the blocks
/// that a commit's atomic writes dirty left unsynced until a checkpoint, a command's kernel time
/// tripled in `bgbench` (see docs/performance.md). Idle, the thread sleeps on a semaphore.
final class WriteBehind: Sendable {
    /// How long a flush waits after the first commit that asks for it, so that a burst of commits
    /// shares one.
    static let gatherMicroseconds: UInt32 = 10_000

    private struct Shared {
        var pending = false
        var stopping = false
    }

    private let root: String
    private let shared = Mutex(Shared())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread; `root` is a folder on the file system to flush.
    init(root: String) {
        self.root = root
        let started = DetachedThread.spawn(name: "write-behind") { [self] in
            run()
            finished.signal()
        }
        // Without its thread nothing is flushed early; durability does not depend on it (above).
        if started != 0 { shared.withLock { $0.stopping = true } }
    }

    /// Asks for a flush soon. Cheap, and safe from any thread; requests before the flush starts
    /// share it.
    func request() {
        let first = shared.withLock { state -> Bool in
            defer { state.pending = true }
            return !state.pending && !state.stopping
        }
        if first { wake.signal() }
    }

    /// Stops the thread (after a flush in progress). Safe to call again.
    func stop() {
        let alreadyStopping = shared.withLock { state -> Bool in
            defer { state.stopping = true }
            return state.stopping
        }
        guard !alreadyStopping else { return }
        wake.signal()
        finished.wait()
    }

    private func run() {
        while true {
            wake.wait()
            if shared.withLock({ $0.stopping }) { return }
            usleep(Self.gatherMicroseconds)
            shared.withLock { $0.pending = false }
            let handle = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard handle >= 0 else { continue }
            // Its result is not this thread's to act on: the checkpoint's own sync, on a descriptor
            // held since the start, is told of any write error this one saw (``JournalFile``).
            _ = bg_syncfs(handle)
            close(handle)
        }
    }
}
