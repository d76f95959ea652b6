import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The newest events of the log, kept current by reading only the bytes appended since the last
/// read. The scheduler appends a line per event, so re-reading the whole log on every change would
/// cost more with every event ever logged; this costs what was appended.
///
/// The log's descriptor stays open: when the log is rotated (renamed to `events.1.jsonl`), the old
/// file is read to its end before the new one is opened, so no event is skipped. A log cut shorter
/// than what was read (the scheduler's journal replay) is read again in full.
///
/// Given a ``RunHistory``, the tail also keeps it: every appended line goes to it (not just the
/// newest `limit`), and at start and on a full reload the rotated logs are read back as far as
/// the history's retention, oldest first, so the timeline has hours of runs while `events`
/// stays short.
public final class EventTail {
    public let paths: StatePaths
    public let limit: Int
    /// The newest `limit` events, oldest first.
    public private(set) var events: [Event] = []
    /// Every app's runs over the history's retention, when the tail keeps one.
    public private(set) var history: RunHistory?
    /// At most this many rotated logs are read back for the history.
    public static let historyFiles = 16

    /// Where the tail stands, so a reader that sent ``events`` once can later send only what was
    /// appended since: the same `reloads` and a larger `appended` mean the newest
    /// `appended - earlier.appended` events are new (all of them when that is more than `limit`).
    public struct Position: Sendable, Hashable {
        /// How many times the log was read again from its start (``reload()``).
        public var reloads: Int
        /// Events added since that read.
        public var appended: Int
    }

    public private(set) var position = Position(reloads: 0, appended: 0)
    private var descriptor: Int32 = -1
    /// Bytes read from `descriptor` so far.
    private var offset: Int64 = 0
    /// The end of the log after its last newline, waiting for the rest of its line.
    private var partial = Data()

    public init(paths: StatePaths, limit: Int, history: RunHistory? = nil) {
        self.paths = paths
        self.limit = limit
        self.history = history
        reload()
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Reads the log again from the start, rotated files included (at start, and when the log was
    /// cut short).
    public func reload() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        offset = 0
        partial = Data()
        events = []
        var rotated: [Int: Data] = [:]
        if let empty = history?.emptied() {
            history = empty
            // Oldest first, one file in memory at a time; the newest is kept for the events below.
            for generation in stride(from: rotatedGenerationsForHistory(), through: 1, by: -1) {
                guard let data = try? StateFiles.read(paths.rotatedEvents(generation), maximumSize: 256 << 20) else { continue }
                history?.apply(lines: data)
                if generation == 1 { rotated[1] = data }
            }
        }
        position = Position(reloads: position.reloads + 1, appended: 0)
        open()
        _ = readAppended()
        // Older events from the rotated files, newest file first, until there are enough.
        var generation = 1
        while events.count < limit, StateFiles.exists(paths.rotatedEvents(generation)) {
            if let data = rotated[generation] ?? (try? StateFiles.read(paths.rotatedEvents(generation), maximumSize: 256 << 20)) {
                events.insert(contentsOf: Self.decodeLast(limit - events.count, linesOf: data), at: 0)
            }
            generation += 1
        }
    }

    /// How many rotated logs the history needs: newest first, up to the first that begins before
    /// the retention (what is older would be dropped at once), at most ``historyFiles``. Only each
    /// file's first line is read to decide.
    private func rotatedGenerationsForHistory() -> Int {
        guard let retention = history?.retention else { return 0 }
        let horizon = Date().addingTimeInterval(-retention)
        var needed = 0
        for generation in 1...Self.historyFiles {
            let path = paths.rotatedEvents(generation)
            guard StateFiles.exists(path) else { break }
            needed = generation
            if let first = Self.firstEventTime(path), first < horizon { break }
        }
        return needed
    }

    /// The time of a log's first event, from its first 64 KiB.
    private static func firstEventTime(_ path: String) -> Date? {
        guard let descriptor = try? RegularFile.open(path, O_RDONLY) else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0, let newline = buffer[0..<count].firstIndex(of: 0x0A) else { return nil }
        return EventLog.decodeLines(Data(buffer[0...newline])).events.first?.time
    }

    /// Reads what was appended since the last call; returns whether the events changed.
    @discardableResult
    public func update() -> Bool {
        guard descriptor >= 0 else {
            open()
            return readAppended()
        }
        var current = stat()
        guard fstat(descriptor, &current) == 0 else {
            reload()
            return true
        }
        if Int64(current.st_size) < offset {
            reload()
            return true
        }
        var changed = readAppended()
        var named = stat()
        if lstat(paths.events, &named) == 0, named.st_ino != current.st_ino || named.st_dev != current.st_dev {
            // Rotated: the old file gets nothing more once renamed, so reading it to its end now
            // leaves nothing behind, and the new one is read from its start.
            changed = readAppended() || changed
            close(descriptor)
            descriptor = -1
            open()
            changed = readAppended() || changed
        }
        return changed
    }

    private func open() {
        descriptor = (try? RegularFile.open(paths.events, O_RDONLY)) ?? -1
        offset = 0
        partial = Data()
    }

    /// Reads to the end of the descriptor and adds the complete lines; returns whether any did.
    private func readAppended() -> Bool {
        guard descriptor >= 0 else { return false }
        var appended = partial
        let size = 64 * 1024
        var buffer = [UInt8](repeating: 0, count: size)
        while true {
            let n = read(descriptor, &buffer, size)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += Int64(n)
            appended.append(contentsOf: buffer[0..<n])
        }
        guard let lastNewline = appended.lastIndex(of: 0x0A) else {
            partial = appended
            return false
        }
        partial = Data(appended[appended.index(after: lastNewline)...])
        let complete = Data(appended[appended.startIndex...lastNewline])
        history?.apply(lines: complete)
        let fresh = Self.decodeLast(limit, linesOf: complete)
        guard !fresh.isEmpty else { return false }
        position.appended += fresh.count
        events.append(contentsOf: fresh)
        if events.count > limit { events.removeFirst(events.count - limit) }
        return true
    }

    /// The events of the last `count` complete lines of `data`: only those are decoded, however
    /// long the file.
    static func decodeLast(_ count: Int, linesOf data: Data) -> [Event] {
        guard count > 0 else { return [] }
        var end = data.endIndex
        // A partial last line (no newline yet) is not an event yet.
        if let last = data.lastIndex(of: 0x0A) { end = data.index(after: last) } else { return [] }
        var start = end
        var lines = 0
        var index = data.index(before: end)
        while index > data.startIndex {
            let previous = data.index(before: index)
            if data[previous] == 0x0A {
                lines += 1
                if lines == count {
                    start = index
                    break
                }
            }
            index = previous
        }
        if lines < count { start = data.startIndex }
        return EventLog.decodeLines(Data(data[start..<end])).events
    }
}
