import Crypto
import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// The end-to-end check of a finished download: the SHA-256 of the bytes on disk, after they were
/// synced and before they are moved into place, against the digest the app asked for.
///
/// It hashes the file as written rather than the bytes as they arrived, so it also covers a resume
/// that stitched the wrong bytes together and anything the disk did to them.
enum ChecksumCheck {
    /// Bytes per read: memory stays at one buffer whatever the file's size.
    static let readSize = 1 << 20

    /// Throws ``TransferFailure/checksumMismatch(expected:actual:)`` when the SHA-256 of `file`
    /// is not `expected` (64 hexadecimal digits; compared without regard to case), and a file
    /// system failure when `file` cannot be read or is not a regular file.
    ///
    /// Checks for cancellation between reads, so pausing or cancelling a large download stops
    /// the hash too.
    static func verify(file path: String, expected: String) throws {
        let actual = try digest(of: path)
        let wanted = expected.lowercased()
        guard actual == wanted else { throw TransferFailure.checksumMismatch(expected: wanted, actual: actual) }
    }

    /// The SHA-256 of the regular file at `path`, as 64 lowercase hexadecimal digits.
    static func digest(of path: String) throws -> String {
        // O_NOFOLLOW: the partial data is ours; a symlink put in its place is refused, not followed.
        // O_NONBLOCK: a FIFO put there must not hang the attempt in open(2); fstat refuses it.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP { throw TransferFailure.fileSystem(path: path, reason: "is a symbolic link, not the downloaded data") }
            throw fileFailure(path, code)
        }
        defer { _ = close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw fileFailure(path) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw TransferFailure.fileSystem(path: path, reason: "is not a regular file, so its SHA-256 cannot be checked")
        }
        var hash = SHA256()
        var buffer = [UInt8](repeating: 0, count: readSize)
        while true {
            try Task.checkCancellation()
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw fileFailure(path)
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hash.update(bufferPointer: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
        return hash.finalize().map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
