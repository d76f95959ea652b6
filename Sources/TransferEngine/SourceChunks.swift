import NIOCore
import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// An open, read-only source file, closed when the last reader lets go of it (the HTTP client may
/// hold the body stream a little longer than the attempt).
final class SourceFile: Sendable {
    let path: String
    let descriptor: Int32
    let length: Int64
    /// Who the file was when it was opened: a rewrite in place changes the times, a replacement
    /// (rename over it) the inode.
    private let identity: Identity

    struct Identity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: timespec
        var changed: timespec

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }

        static func == (a: Identity, b: Identity) -> Bool {
            a.device == b.device && a.inode == b.inode && a.size == b.size
                && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
                && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
        }
    }

    init(path: String) throws(TransferFailure) {
        // O_NONBLOCK: a FIFO named as the source must not hang the attempt; fstat refuses it.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw .sourceUnreadable(path: path, reason: String(cString: strerror(errno)))
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            _ = close(descriptor)
            throw .sourceUnreadable(path: path, reason: "not a regular file")
        }
        self.path = path
        self.descriptor = descriptor
        self.length = Int64(info.st_size)
        identity = Identity(info)
    }

    deinit { _ = close(descriptor) }

    /// Throws ``TransferFailure/sourceChanged(path:)`` when the open file was written to, or the
    /// path now names another file, since it was opened.
    func checkUnchanged() throws(TransferFailure) {
        var open = stat()
        var named = stat()
        guard fstat(descriptor, &open) == 0, Identity(open) == identity,
              stat(path, &named) == 0, Identity(named) == identity else {
            throw .sourceChanged(path: path)
        }
    }
}

/// The bytes of a source file as a stream of buffers, read one chunk at a time as the HTTP client
/// asks for them, so memory stays at one chunk whatever the file's size.
struct SourceChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    /// Bytes per read.
    static let chunkSize = 256 * 1024

    let file: SourceFile
    /// Called with each chunk's size as it is handed over.
    let onChunk: @Sendable (Int) -> Void

    struct AsyncIterator: AsyncIteratorProtocol {
        let file: SourceFile
        let onChunk: @Sendable (Int) -> Void
        var offset: Int64 = 0

        mutating func next() async throws -> ByteBuffer? {
            guard offset < file.length else { return nil }
            try Task.checkCancellation()
            let wanted = Int(Swift.min(Int64(SourceChunks.chunkSize), file.length - offset))
            var buffer = ByteBufferAllocator().buffer(capacity: wanted)
            let start = offset
            let descriptor = file.descriptor
            let count = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: wanted) { bytes in
                var done = 0
                while done < wanted {
                    let result = pread(descriptor, bytes.baseAddress! + done, wanted - done, off_t(start) + off_t(done))
                    if result < 0 && errno == EINTR { continue }
                    if result <= 0 { break }
                    done += result
                }
                return done
            }
            guard count == wanted else { throw TransferFailure.sourceChanged(path: file.path) }
            offset += Int64(count)
            onChunk(count)
            return buffer
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(file: file, onChunk: onChunk)
    }
}
