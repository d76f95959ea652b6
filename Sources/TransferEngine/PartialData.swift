import TransferCore
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
        // O_NONBLOCK: a FIFO or device put in its place must not hang the attempt; fstat refuses it.
        let descriptor = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o600)
        guard descriptor >= 0 else { throw fileFailure(path) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = fileFailure(path)
            _ = Glibc.close(descriptor)
            throw failure
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            _ = Glibc.close(descriptor)
            throw .fileSystem(path: path, reason: "the partial data is not a regular file")
        }
        self.path = path
        self.descriptor = descriptor
        self.length = Int64(info.st_size)
    }

    deinit { close() }

    /// The validator recorded for the bytes held (see ``PartialValidatorFile``).
    var validator: ResumeValidator? { PartialValidatorFile.read(for: path) }

    /// Cuts the file back to its first `count` bytes (the prefix known to be good).
    func truncate(to count: Int64) throws(TransferFailure) {
        guard count < length else { return }
        guard ftruncate(descriptor, off_t(count)) == 0 else { throw fileFailure(path) }
        length = count
    }

    /// Begins a new representation: every held byte dropped durably, then `validator` recorded
    /// durably, and only then may its bytes be appended. A crash in between leaves an empty file.
    func startOver(with validator: ResumeValidator?) throws(TransferFailure) {
        if length > 0 {
            guard ftruncate(descriptor, 0) == 0 else { throw fileFailure(path) }
            length = 0
            try sync()
        }
        if let validator { try PartialValidatorFile.write(validator, for: path) }
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

    /// Removes a partial file and its validator; missing ones are fine.
    static func remove(at path: String) {
        _ = unlink(path)
        PartialValidatorFile.remove(for: path)
    }
}
