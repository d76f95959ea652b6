#if canImport(Glibc)
import Glibc
#endif

/// A non-blocking, close-on-exec pipe one thread writes a byte to so that another, blocked in
/// `poll` on ``readEnd``, wakes up: how the programs here hand work across threads (and out of
/// signal handlers) without polling.
///
/// A class, so the descriptors are closed once, when the last holder lets go: a thread that may
/// still call ``wake()`` keeps the pipe open, and never writes into a reused descriptor number.
public final class WakePipe: Sendable {
    public let readEnd: Int32
    public let writeEnd: Int32

    public init() throws(StateError) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .system(operation: "cannot create a pipe for", path: "waking a thread", errno: errno) }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Wakes the reader. Safe from any thread; a full pipe already means "wake up".
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe after a wake-up.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}
