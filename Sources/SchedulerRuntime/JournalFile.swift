import CLinuxSupport
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `journal.json`: a write-ahead log of commit batches. Each commit appends one record and
/// `fdatasync`s, so a command is durable after one flush of one file that already exists: no new
/// inode, no rename, no directory fsync. The file is emptied by a checkpoint (``GroupCommit``)
/// once the files the batches wrote are synced.
///
/// Each record is a header line, `bgtop-journal 1 <length> <fnv-1a-64 hex>`, then `<length>`
/// bytes of body. A record that a crash cut short fails its header or checksum: it was never
/// durable and none of its commands was acknowledged, so they are all still in the inbox (or their
/// socket clients still wait). Reading stops at the first such record; what follows is kept aside.
final class JournalFile {
    let path: String
    private let descriptor: Int32
    /// Where the next record goes: the file's size as this process wrote it.
    private(set) var size = 0
    /// Records appended since the file was last emptied.
    private(set) var batchCount = 0
    /// When the last record was appended (`CLOCK_MONOTONIC` seconds), while the file holds any.
    private(set) var lastAppendAt: Double?

    /// What the file held at start-up.
    struct Contents {
        /// Whole records, oldest first.
        var batches: [Data] = []
        /// The bytes from the first record that is not whole (a write cut short, or a foreign
        /// file) to the end, to keep aside; `nil` when every record is whole.
        var torn: Data?

        var isEmpty: Bool { batches.isEmpty && torn == nil }
    }

    init(path: String) throws(StateError) {
        self.path = path
        let existed = StateFiles.exists(path)
        // Never blocks, never follows a link, refuses a FIFO or directory (the daemon sets such a
        // journal aside before it gets here; see ``StartupSetAside``).
        descriptor = try RegularFile.open(path, O_RDWR | O_CREAT)
        let folder = StateFiles.directoryName(of: path)
        folderDescriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard folderDescriptor >= 0 else {
            let code = errno
            close(descriptor)
            throw .system(operation: "cannot open", path: folder, errno: code)
        }
        if !existed { try StateFiles.syncDirectory(folder) }
        size = max(0, Int(lseek(descriptor, 0, SEEK_END)))
    }

    deinit {
        close(descriptor)
        close(folderDescriptor)
    }

    /// The state directory, held open from the start: its `syncfs` reports every write error of
    /// the file system since it was opened, even one another descriptor's `syncfs` (the
    /// write-behind thread's) has already seen. A descriptor opened for each sync would miss
    /// those, and a checkpoint would then empty the journal over files that never reached the disk.
    private let folderDescriptor: Int32

    /// Syncs the file system the journal is on (see ``folderDescriptor``); throws on a write error.
    func syncFileSystem() throws(StateError) {
        guard bg_syncfs(folderDescriptor) == 0 else { throw .system(operation: "cannot sync file system of", path: path, errno: errno) }
    }

    /// Reads and checks what is in the file.
    func contents() throws(StateError) -> Contents {
        let data = try StateFiles.read(path, maximumSize: 512 << 20)
        return Self.parse(data)
    }

    /// Splits `data` into whole records, stopping at the first that is not whole.
    static func parse(_ data: Data) -> Contents {
        var contents = Contents()
        var start = data.startIndex
        while start < data.endIndex {
            guard let body = record(in: data, at: start) else {
                contents.torn = Data(data[start...])
                break
            }
            contents.batches.append(Data(data[body]))
            start = body.upperBound
        }
        return contents
    }

    /// The body of the record that starts at `start`, if it is whole.
    private static func record(in data: Data, at start: Data.Index) -> Range<Data.Index>? {
        // A header is short; a missing newline within a few hundred bytes is a torn header.
        let limit = data.index(start, offsetBy: 256, limitedBy: data.endIndex) ?? data.endIndex
        guard let newline = data[start..<limit].firstIndex(of: 0x0A) else { return nil }
        let header = String(decoding: data[start..<newline], as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard header.count == 4, header[0] == "bgtop-journal", header[1] == "1", let length = Int(header[2]), length >= 0 else {
            return nil
        }
        let bodyStart = data.index(after: newline)
        guard let bodyEnd = data.index(bodyStart, offsetBy: length, limitedBy: data.endIndex),
              header[3] == checksum(data[bodyStart..<bodyEnd]) else { return nil }
        return bodyStart..<bodyEnd
    }

    /// The record for `body`: its header line, then the body.
    static func record(_ body: Data) -> Data {
        var data = Data("bgtop-journal 1 \(body.count) \(checksum(body))\n".utf8)
        data.append(body)
        return data
    }

    /// Appends `body` as one record and makes it durable.
    func append(_ body: Data) throws(StateError) {
        let data = Self.record(body)
        do throws(StateError) {
            try StateFiles.writeAll(descriptor, data, path: path, at: off_t(size))
            guard fdatasync(descriptor) == 0 else { throw StateError.system(operation: "cannot sync", path: path, errno: errno) }
        } catch {
            // Whatever part of it reached the file is cut off again, so a later record never
            // follows a torn one (the commit stops the scheduler anyway).
            _ = ftruncate(descriptor, off_t(size))
            throw error
        }
        size += data.count
        batchCount += 1
        lastAppendAt = bg_monotonic_seconds()
    }

    /// Empties the file, durably: once emptied, later records start at offset 0, and a crash
    /// must never find old records after them (they would be replayed after newer ones).
    func clear() throws(StateError) {
        guard ftruncate(descriptor, 0) == 0 else { throw .system(operation: "cannot truncate", path: path, errno: errno) }
        // The file is empty from here on, synced or not: the next record goes at offset 0.
        size = 0
        batchCount = 0
        lastAppendAt = nil
        guard fdatasync(descriptor) == 0 else { throw .system(operation: "cannot sync", path: path, errno: errno) }
    }

    /// FNV-1a, 64 bits, in hex: enough to tell a torn write from a whole one.
    /// Over the raw buffer: iterating `Data` calls into Foundation once per byte.
    static func checksum(_ bytes: Data) -> String {
        let hash = bytes.withUnsafeBytes { buffer in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in buffer {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return hash
        }
        return String(hash, radix: 16)
    }
}
