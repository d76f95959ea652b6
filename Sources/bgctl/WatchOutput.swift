import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Standard output of `bgctl watch`, written without blocking the loop when it is a pipe or a
/// socket (what ssh gives): what the reader has not taken yet waits here, and the loop makes no
/// new state line until it is gone. A terminal or a file is written the ordinary way.
final class WatchOutput {
    private let descriptor: Int32
    private let originalFlags: Int32
    private let nonBlocking: Bool
    private var pending = Data()
    /// How much of `pending` is written already (moving an index, not the bytes: a snapshot line
    /// can be many megabytes, written 64 KiB at a time).
    private var offset = 0
    /// The reader went away (EPIPE) or writing failed otherwise.
    private(set) var failed = false

    init(descriptor: Int32) {
        self.descriptor = descriptor
        originalFlags = fcntl(descriptor, F_GETFL)
        var info = stat()
        let isStream = fstat(descriptor, &info) == 0 && ((info.st_mode & S_IFMT) == S_IFIFO || (info.st_mode & S_IFMT) == S_IFSOCK)
        nonBlocking = isStream && originalFlags >= 0 && fcntl(descriptor, F_SETFL, originalFlags | O_NONBLOCK) == 0
    }

    /// Puts the descriptor's flags back (it may be shared with the process that started us).
    func restore() {
        if nonBlocking { _ = fcntl(descriptor, F_SETFL, originalFlags) }
    }

    var hasPending: Bool { offset < pending.count && !failed }

    /// Queues `data` and writes what the descriptor takes now.
    func write(_ data: Data) {
        if offset == pending.count {
            pending = data
            offset = 0
        } else {
            pending.append(data)
        }
        _ = flush()
    }

    /// Writes what the descriptor takes; false once writing has failed (EPIPE: the reader is gone).
    func flush() -> Bool {
        guard !failed else { return false }
        while offset < pending.count {
            let written = pending.withUnsafeBytes { bytes in
                Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            }
            if written > 0 {
                offset += written
                continue
            }
            if written < 0 && errno == EINTR { continue }
            if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && nonBlocking { return true }
            failed = true
            pending = Data()
            offset = 0
            return false
        }
        pending = Data()
        offset = 0
        return true
    }
}
