import FoundationEssentials
import TaskState

/// Request keys by date, earliest first (a binary heap): which requests' dates have passed,
/// without looking at the others. A key may be in it more than once; a reader asks again for
/// whatever comes out, so a stale entry costs one question.
struct DateQueue {
    private var entries: [(date: Date, key: TaskKey)] = []

    var count: Int { entries.count }

    mutating func insert(_ date: Date, _ key: TaskKey) {
        entries.append((date, key))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].date < entries[parent].date else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// The earliest key whose date is at or before `limit`, taken out; nil when there is none.
    mutating func popFirst(notAfter limit: Date) -> TaskKey? {
        guard let first = entries.first, first.date <= limit else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < entries.count, entries[left].date < entries[smallest].date { smallest = left }
                if right < entries.count, entries[right].date < entries[smallest].date { smallest = right }
                guard smallest != parent else { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first.key
    }
}
