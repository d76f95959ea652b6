import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The JSON Lines event log: `events.jsonl`, rotated by size into `events.1.jsonl` ...
/// `events.N.jsonl`.
///
/// Rotation renames files, so a reader that holds the old file open reads it to the end before
/// moving on to the new one: nothing is lost on rotation.
public struct EventLog: Sendable {
    public let paths: StatePaths

    public init(paths: StatePaths) {
        self.paths = paths
    }

    /// Appends whole lines with one `write`; returns the file's size before the append.
    ///
    /// Never blocks and never follows a link: a FIFO, directory or link in place of the log is
    /// refused with its kind named (see ``problem()``; the scheduler sets such a log aside).
    @discardableResult
    public func append(_ lines: Data) throws(StateError) -> Int {
        let fd = try RegularFile.open(paths.events, O_WRONLY | O_APPEND | O_CREAT)
        defer { close(fd) }
        let before = Int(lseek(fd, 0, SEEK_END))
        try StateFiles.writeAll(fd, lines, path: paths.events)
        return before
    }

    /// Opens the log for appending, as ``append(_:)`` does (made when missing), and gives its size:
    /// one open for a commit that checks the log, measures it and appends to it. The caller closes
    /// the descriptor.
    public func openForAppending() throws(StateError) -> (descriptor: Int32, size: Int) {
        let fd = try RegularFile.open(paths.events, O_WRONLY | O_APPEND | O_CREAT)
        let end = lseek(fd, 0, SEEK_END)
        guard end >= 0 else {
            let code = errno
            close(fd)
            throw .system(operation: "cannot seek", path: paths.events, errno: code)
        }
        return (fd, Int(end))
    }

    /// Appends whole lines with one `write` through a descriptor of ``openForAppending()``.
    public func append(_ lines: Data, to descriptor: Int32) throws(StateError) {
        try StateFiles.writeAll(descriptor, lines, path: paths.events)
    }

    /// Why `events.jsonl` cannot be appended to, or `nil` when it can (or does not exist yet).
    ///
    /// The scheduler asks before each commit with events: a log it cannot append to (a symbolic
    /// link, a directory, a FIFO, a file it may not write) would otherwise stop every commit.
    public func problem() -> String? {
        guard StateFiles.exists(paths.events) else { return nil }
        do {
            close(try RegularFile.open(paths.events, O_WRONLY | O_APPEND))
            return nil
        } catch {
            return error.description
        }
    }

    /// Cuts the log back to `size` bytes (journal replay uses this before appending again).
    /// Through the descriptor of the regular file itself: a link in its place is never followed.
    public func truncate(to size: Int) throws(StateError) {
        guard let current = StateFiles.size(of: paths.events), current > size else { return }
        let fd = try RegularFile.open(paths.events, O_WRONLY)
        defer { close(fd) }
        guard ftruncate(fd, off_t(size)) == 0 else {
            throw .system(operation: "cannot truncate", path: paths.events, errno: errno)
        }
    }

    /// Rotates when `events.jsonl` is at least `maximumBytes`, keeping `keep` old files.
    public func rotateIfNeeded(maximumBytes: Int, keep: Int) throws(StateError) {
        guard let size = StateFiles.size(of: paths.events), size >= maximumBytes else { return }
        if keep < 1 {
            try StateFiles.remove(paths.events)
            return
        }
        try StateFiles.remove(paths.rotatedEvents(keep))
        if keep > 1 {
            for generation in stride(from: keep - 1, through: 1, by: -1)
            where StateFiles.exists(paths.rotatedEvents(generation)) {
                try StateFiles.move(paths.rotatedEvents(generation), to: paths.rotatedEvents(generation + 1))
            }
        }
        try StateFiles.move(paths.events, to: paths.rotatedEvents(1))
    }

    /// The last `limit` events, oldest first, across the current and rotated files.
    /// Lines that do not decode are skipped and counted.
    public func recent(limit: Int) -> (events: [Event], unreadable: Int) {
        var collected: [Event] = []
        var unreadable = 0
        var files = [paths.events]
        // Rotated files are numbered without gaps; the first missing one ends the list.
        var generation = 1
        while StateFiles.exists(paths.rotatedEvents(generation)) {
            files.append(paths.rotatedEvents(generation))
            generation += 1
        }
        for file in files {
            guard collected.count < limit, let data = try? StateFiles.read(file, maximumSize: 256 << 20) else { continue }
            let (events, bad) = Self.decodeLines(data)
            unreadable += bad
            collected.insert(contentsOf: events.suffix(limit - collected.count), at: 0)
        }
        return (collected, unreadable)
    }

    /// Decodes complete JSON Lines; a partial last line (no newline yet) is left out.
    public static func decodeLines(_ data: Data) -> (events: [Event], unreadable: Int) {
        let decoder = JSONFormat.decoder()
        var events: [Event] = []
        var unreadable = 0
        var start = data.startIndex
        while let newline = data[start...].firstIndex(of: 0x0A) {
            let line = data[start..<newline]
            start = data.index(after: newline)
            if line.isEmpty { continue }
            if let event = try? JSONFormat.decode(Event.self, from: line, using: decoder) {
                events.append(event)
            } else {
                unreadable += 1
            }
        }
        return (events, unreadable)
    }
}
