import CLinuxSupport
import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `journal.json`: one file, rewritten in place for every batch and emptied once the batch is on
/// disk. Keeping one file (rather than creating a new one per batch) costs one `fdatasync` per
/// batch: no new inode, no rename, no directory fsync.
///
/// The file starts with a header line, `bgtop-journal 1 <length> <fnv-1a-64 hex>`, so a write that
/// a crash cut short (old and new bytes mixed) is recognised and dropped: such a batch was never
/// durable and none of its commands was acknowledged, so they are all still in the inbox.
final class JournalFile {
    let path: String
    private let descriptor: Int32

    /// What the file held at start-up.
    enum Contents {
        case empty
        case batch(Data)
        /// Not a whole batch: a write cut short, or a foreign file. The raw bytes, to keep aside.
        case torn(Data)
    }

    init(path: String) throws(StateError) {
        self.path = path
        let existed = StateFiles.exists(path)
        // Never blocks, never follows a link, refuses a FIFO or directory (the daemon sets such a
        // journal aside before it gets here; see ``StartupSetAside``).
        descriptor = try RegularFile.open(path, O_RDWR | O_CREAT)
        if !existed { try StateFiles.syncDirectory(StateFiles.directoryName(of: path)) }
    }

    deinit { close(descriptor) }

    /// Reads and checks what is in the file.
    func contents() throws(StateError) -> Contents {
        let data = try StateFiles.read(path, maximumSize: 512 << 20)
        if data.isEmpty { return .empty }
        guard let newline = data.firstIndex(of: 0x0A) else { return .torn(data) }
        let header = String(decoding: data[data.startIndex..<newline], as: UTF8.self).split(separator: " ")
        let body = data[data.index(after: newline)...]
        guard header.count == 4, header[0] == "bgtop-journal", header[1] == "1", Int(header[2]) == body.count,
              header[3] == Self.checksum(body) else { return .torn(data) }
        return .batch(Data(body))
    }

    /// Replaces the contents with `body` and makes it durable.
    func write(_ body: Data) throws(StateError) {
        var data = Data("bgtop-journal 1 \(body.count) \(Self.checksum(body))\n".utf8)
        data.append(body)
        try StateFiles.writeAll(descriptor, data, path: path, at: 0)
        guard ftruncate(descriptor, off_t(data.count)) == 0 else { throw .system(operation: "cannot truncate", path: path, errno: errno) }
        guard fdatasync(descriptor) == 0 else { throw .system(operation: "cannot sync", path: path, errno: errno) }
    }

    /// Empties the file. Not synced: if a crash undoes this, the batch still in it is the latest
    /// one, and replaying the latest batch again changes nothing.
    func clear() throws(StateError) {
        guard ftruncate(descriptor, 0) == 0 else { throw .system(operation: "cannot truncate", path: path, errno: errno) }
    }

    /// FNV-1a, 64 bits, in hex: enough to tell a torn write from a whole one.
    static func checksum<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }
}
