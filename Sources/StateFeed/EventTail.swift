import Foundation
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
public final class EventTail {
    public let paths: StatePaths
    public let limit: Int
    /// The newest `limit` events, oldest first.
    public private(set) var events: [Event] = []

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

    public init(paths: StatePaths, limit: Int) {
        self.paths = paths
        self.limit = limit
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
        position = Position(reloads: position.reloads + 1, appended: 0)
        open()
        _ = readAppended()
        // Older events from the rotated files, newest file first, until there are enough.
        var generation = 1
        while events.count < limit, StateFiles.exists(paths.rotatedEvents(generation)) {
            if let data = try? StateFiles.read(paths.rotatedEvents(generation), maximumSize: 256 << 20) {
                events.insert(contentsOf: Self.decodeLast(limit - events.count, linesOf: data), at: 0)
            }
            generation += 1
        }
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
        let fresh = Self.decodeLast(limit, linesOf: Data(appended[appended.startIndex...lastNewline]))
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
