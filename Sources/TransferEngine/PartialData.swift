import NIOCore
#if canImport(Glibc)
import Glibc
#endif

/// The partial file of a download: the entity's first bytes, appended to as chunks arrive.
///
/// Writes are plain `write(2)` calls on the attempt's task: they land in the page cache and cost
/// microseconds, and the one `fsync` happens before the move into place.
final class PartialData {
    let path: String
    private var descriptor: Int32
    /// Bytes in the file.
    private(set) var length: Int64

    /// Opens (creating, 0600) the partial file, creating its folder if needed.
    init(path: String) throws(TransferFailure) {
        let folder = parentFolder(path)
        if fileKind(folder) == .missing, mkdir(folder, 0o700) != 0, errno != EEXIST {
            throw fileFailure(folder)
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw fileFailure(path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = fileFailure(path)
            _ = Glibc.close(descriptor)
            throw failure
        }
        self.path = path
        self.descriptor = descriptor
        self.length = Int64(info.st_size)
    }

    deinit { close() }

    /// Drops every byte, to start the entity over.
    func truncate() throws(TransferFailure) {
        guard ftruncate(descriptor, 0) == 0 else { throw fileFailure(path) }
        length = 0
    }

    /// Appends `buffer` whole.
    func append(_ buffer: ByteBuffer) throws(TransferFailure) {
        let result: Int32 = buffer.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
        if result != 0 {
            // A short write leaves a torn tail; cut back to what is known good so the bytes kept
            // are still a prefix of the entity.
            _ = ftruncate(descriptor, off_t(length))
            throw fileFailure(path, result)
        }
        length += Int64(buffer.readableBytes)
    }

    /// Makes the bytes durable.
    func sync() throws(TransferFailure) {
        guard fsync(descriptor) == 0 else { throw fileFailure(path) }
    }

    func close() {
        if descriptor >= 0 {
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// Removes a partial file; a missing one is fine.
    static func remove(at path: String) {
        _ = unlink(path)
    }
}
