import CLinuxSupport
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `journal.json`: a write-ahead log of commit batches. Each commit writes one record and
/// `fdatasync`s, so a command is durable after one flush of one file that already exists: no new
/// inode, no rename, no directory fsync. A checkpoint (``GroupCommit``) empties it once the files
/// the batches wrote are synced.
///
/// Each record is a header line, `bgtop-journal 1 <length> <fnv-1a-64 hex>`, then `<length>`
/// bytes of body. A record that a crash cut short fails its header or checksum: it was never
/// durable and none of its commands was acknowledged, so they are all still in the inbox (or their
/// socket clients still wait). Reading stops at the first such record; what follows is kept aside.
///
/// The file keeps its size: it is zeros after the records, ``preallocatedBytes`` long at least,
/// and emptying it writes zeros over what the records used. So a record is written over
/// blocks the file already has, and its `fdatasync` flushes data alone; a record that made the file
/// longer would make each `fdatasync` commit the file system's journal as well (the inode's new
/// size), five times the cost on ext4 (docs/performance.md). A zero byte where a record would
/// start ends the records; records never hold one (the body is JSON text).
final class JournalFile {
    let path: String
    private let descriptor: Int32
    /// Where the next record goes: the end of the records.
    private(set) var size = 0
    /// Where the bytes that may not be zero end: the records, and whatever followed them at start-up.
    private var usedEnd = 0
    /// The file's length, as this process has made it.
    private var length = 0

    /// The file's least length, zeros after the records: more than a checkpoint lets the records
    /// grow to (1 MiB, ``GroupCommit/maximumBytes``) and a batch of up to 256 KiB (a larger one
    /// makes the file longer).
    static let preallocatedBytes = 5 << 18
    /// Records appended since the file was last emptied.
    private(set) var batchCount = 0
    /// When the last record was appended (`CLOCK_MONOTONIC` seconds), while the file holds any.
    private(set) var lastAppendAt: Double?

    /// What the file held at start-up.
    struct Contents {
        /// Whole records, oldest first.
        var batches: [Data] = []
        /// The bytes from the first record that is not whole (a write cut short, or a foreign
        /// file) to the last that is not zero, to keep aside; `nil` when every record is whole.
        var torn: Data?
        /// Where the whole records end.
        var recordsEnd = 0

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
        // Every stored property is set from here: a throw runs deinit, which closes both.
        guard folderDescriptor >= 0 else { throw .system(operation: "cannot open", path: folder, errno: errno) }
        if !existed { try StateFiles.syncDirectory(folder) }
        _ = try contents()
    }

    /// The largest journal read: a bound on the replay, as on any state file.
    static let maximumBytes = 512 << 20

    /// Where the bytes that are not zero end, found 16 KiB at a time: after a clean stop the file
    /// is all zeros, and its 1.25 MiB are never held in memory at once. A file longer than
    /// ``maximumBytes`` is refused before any of it is read (a sparse one would take hours).
    private func lastNonZeroEnd() throws(StateError) -> Int {
        guard length <= Self.maximumBytes else { throw .tooLarge(path: path, bytes: length) }
        var buffer = [UInt8](repeating: 0, count: Self.chunkBytes)
        var offset = 0
        var end = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system(operation: "cannot read", path: path, errno: errno)
            }
            if count == 0 { return end }
            // memcmp against zeros first: the usual chunk is all zeros, and that test is vectorised.
            let allZero = buffer.withUnsafeBytes { chunk in Self.zeros.withUnsafeBytes { memcmp(chunk.baseAddress!, $0.baseAddress!, count) == 0 } }
            if !allZero, let last = buffer[0..<count].lastIndex(where: { $0 != 0 }) { end = offset + last + 1 }
            offset += count
            // A file that grows while it is read is read no further than it was long.
            if offset >= length { return end }
        }
    }

    /// The file up to ``usedEnd``: what there is to parse, or to keep aside.
    func usedBytes() throws(StateError) -> Data {
        var data = Data(count: usedEnd)
        var failure: StateError?
        data.withUnsafeMutableBytes { buffer in
            var done = 0
            while done < buffer.count {
                let count = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(done))
                if count < 0 && errno == EINTR { continue }
                if count < 0 { failure = .system(operation: "cannot read", path: path, errno: errno); return }
                if count == 0 { break }
                done += count
            }
        }
        if let failure { throw failure }
        return data
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

    /// Reads and checks what is in the file as it is now (at the open, and again to replay it):
    /// where the records end, and where the bytes that are not zero do.
    func contents() throws(StateError) -> Contents {
        length = max(0, Int(lseek(descriptor, 0, SEEK_END)))
        // Anything not zero counts, even past a zero where a record would start (what a
        // checkpoint that a crash cut short left): it is zeroed before a record is written.
        usedEnd = try lastNonZeroEnd()
        let contents = Self.parse(try usedBytes())
        size = contents.recordsEnd
        return contents
    }

    /// Splits `data` into whole records, stopping at the end of the data, at a zero byte where a
    /// record would start (the zeros after the records), or at the first record that is not whole.
    static func parse(_ data: Data) -> Contents {
        var contents = Contents()
        var start = data.startIndex
        while start < data.endIndex && data[start] != 0 {
            guard let body = record(in: data, at: start) else {
                // What a torn write or a foreign file left, without the zeros after it.
                let end = data.lastIndex(where: { $0 != 0 }).map { data.index(after: $0) } ?? start
                contents.torn = Data(data[start..<max(start, end)])
                break
            }
            contents.batches.append(Data(data[body]))
            start = body.upperBound
        }
        contents.recordsEnd = start - data.startIndex
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

    /// Writes `body` as one record after the others and makes it durable.
    func append(_ body: Data) throws(StateError) {
        if usedEnd > size {
            // Old bytes after the records (a journal not cleared since it was opened): zeros first,
            // on disk, so that no old record can follow this one.
            try writeZeros(size..<usedEnd)
            guard fdatasync(descriptor) == 0 else { throw .system(operation: "cannot sync", path: path, errno: errno) }
            usedEnd = size
        }
        let data = Self.record(body)
        do throws(StateError) {
            try StateFiles.writeAll(descriptor, data, path: path, at: off_t(size))
            guard fdatasync(descriptor) == 0 else { throw StateError.system(operation: "cannot sync", path: path, errno: errno) }
        } catch {
            // Whatever part of it reached the file is zeroed again, so a later record never
            // follows a torn one (the commit stops the scheduler anyway).
            try? writeZeros(size..<(size + data.count))
            throw error
        }
        size += data.count
        usedEnd = max(usedEnd, size)
        length = max(length, size)
        batchCount += 1
        lastAppendAt = bg_monotonic_seconds()
    }

    /// Empties the file, durably: once emptied, later records start at offset 0, and a crash
    /// must never find old records after them (they would be replayed after newer ones). The
    /// first byte goes first, on its own sync: from then on a crash finds no record at all, even
    /// if the rest of the zeros had not reached the disk. One byte, not a page: a disk writes a
    /// sector whole, but not a page, and a first page half zeroed would show its first records
    /// whole, to be replayed after the later batches whose records were zeroed. Whatever the
    /// first sector holds after a crash, every record or none is replayed. The rest, and the zeros
    /// that keep the file at ``preallocatedBytes``, are on disk before the next record is written.
    func clear() throws(StateError) {
        let first = min(usedEnd, 1)
        if first > 0 {
            try writeZeros(0..<first)
            guard fdatasync(descriptor) == 0 else { throw .system(operation: "cannot sync", path: path, errno: errno) }
        }
        // The file holds no record from here on: the next one goes at offset 0.
        size = 0
        batchCount = 0
        lastAppendAt = nil
        // Past `usedEnd` the file is zeros already, up to its length.
        let rest = first..<max(first, usedEnd)
        let growth = max(length, rest.upperBound)..<max(length, rest.upperBound, Self.preallocatedBytes)
        if !rest.isEmpty || !growth.isEmpty {
            try writeZeros(rest)
            try writeZeros(growth)
            guard fdatasync(descriptor) == 0 else { throw .system(operation: "cannot sync", path: path, errno: errno) }
        }
        usedEnd = 0
        length = max(length, growth.upperBound)
    }

    /// Whether the file holds no record, nothing else that is not zero, and its zeros: what
    /// ``clear()`` leaves. A journal that is not (new, left by an older `bgtaskd`, or by a
    /// checkpoint a crash cut short) is cleared before the first record is written.
    var isClear: Bool { size == 0 && usedEnd == 0 && length >= Self.preallocatedBytes }

    /// Flushes the file: zeros a previous process wrote but had not synced when it was killed
    /// are on disk before the first record goes over them.
    func sync() throws(StateError) {
        guard fdatasync(descriptor) == 0 else { throw .system(operation: "cannot sync", path: path, errno: errno) }
    }

    /// What the scan reads and the zeroing writes at a time: small, since what a process once
    /// held on its heap stays resident in an idle scheduler.
    private static let chunkBytes = 16 << 10
    private static let zeros = Data(count: chunkBytes)

    private func writeZeros(_ range: Range<Int>) throws(StateError) {
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = min(range.upperBound - offset, Self.zeros.count)
            try StateFiles.writeAll(descriptor, count == Self.zeros.count ? Self.zeros : Self.zeros.prefix(count), path: path, at: off_t(offset))
            offset += count
        }
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
