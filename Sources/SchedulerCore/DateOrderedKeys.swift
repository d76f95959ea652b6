import FoundationEssentials
import TaskState

/// Task keys in the order of a date (ties by key), kept sorted as keys come and go.
///
/// Entries live in chunks of at most ``chunkLimit``, each sorted, the chunks in order: an insert or
/// a removal moves at most a chunk's entries and finds its chunk by a binary search over the
/// chunks' last entries, so it stays cheap at 100 000 keys, where one sorted array would move
/// megabytes each time.
struct DateOrderedKeys: Sendable {
    struct Entry: Comparable, Sendable {
        var date: Date
        var key: TaskKey

        static func < (lhs: Entry, rhs: Entry) -> Bool {
            (lhs.date, lhs.key) < (rhs.date, rhs.key)
        }
    }

    static let chunkLimit = 256

    private var chunks: [[Entry]] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func insert(_ entry: Entry) {
        count += 1
        guard !chunks.isEmpty else {
            chunks = [[entry]]
            return
        }
        let chunk = min(chunkIndex { $0 < entry }, chunks.count - 1)
        chunks[chunk].insert(entry, at: Self.firstIndex(in: chunks[chunk]) { $0 < entry })
        if chunks[chunk].count > 2 * Self.chunkLimit {
            let upper = Array(chunks[chunk][Self.chunkLimit...])
            chunks[chunk].removeSubrange(Self.chunkLimit...)
            chunks.insert(upper, at: chunk + 1)
        }
    }

    /// Removes `entry` if it is there.
    mutating func remove(_ entry: Entry) {
        let chunk = chunkIndex { $0 < entry }
        guard chunk < chunks.count else { return }
        let index = Self.firstIndex(in: chunks[chunk]) { $0 < entry }
        guard index < chunks[chunk].count, chunks[chunk][index] == entry else { return }
        chunks[chunk].remove(at: index)
        count -= 1
        if chunks[chunk].isEmpty { chunks.remove(at: chunk) }
    }

    /// Calls `body` with each entry in order, from the first dated after `date` (from the first
    /// of all when `date` is `nil`), until `body` returns `false`.
    func forEach(after date: Date? = nil, _ body: (Entry) -> Bool) {
        var chunk = 0
        var index = 0
        if let date {
            chunk = chunkIndex { $0.date <= date }
            guard chunk < chunks.count else { return }
            index = Self.firstIndex(in: chunks[chunk]) { $0.date <= date }
        }
        while chunk < chunks.count {
            let entries = chunks[chunk]
            while index < entries.count {
                guard body(entries[index]) else { return }
                index += 1
            }
            chunk += 1
            index = 0
        }
    }

    /// Calls `body` with each entry dated at or before `date`, latest first, until `body` returns
    /// `false`: the end of a window is found from its end, without walking all of it.
    func forEachBackward(through date: Date, _ body: (Entry) -> Bool) {
        var chunk = chunkIndex { $0.date <= date }
        var index: Int
        if chunk < chunks.count {
            index = Self.firstIndex(in: chunks[chunk]) { $0.date <= date } - 1
        } else {
            chunk = chunks.count - 1
            index = chunk >= 0 ? chunks[chunk].count - 1 : -1
        }
        while chunk >= 0 {
            let entries = chunks[chunk]
            while index >= 0 {
                guard body(entries[index]) else { return }
                index -= 1
            }
            chunk -= 1
            if chunk >= 0 { index = chunks[chunk].count - 1 }
        }
    }

    /// The first chunk whose last entry is past the leading run `isLeading` holds for (the order
    /// makes it a run); `chunks.count` when there is none.
    private func chunkIndex(_ isLeading: (Entry) -> Bool) -> Int {
        var low = 0
        var high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if isLeading(chunks[middle][chunks[middle].count - 1]) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The first index past the leading run of `entries` that `isLeading` holds for.
    private static func firstIndex(in entries: [Entry], _ isLeading: (Entry) -> Bool) -> Int {
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if isLeading(entries[middle]) { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
