import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// When each command's outcome file is due for removal: `outcomeRetentionSeconds` after it was
/// written. Removals ride on the next commit after that time; no timer is set for them.
struct OutcomeRetention {
    private struct Entry {
        var removeAt: Date
        var command: String
    }

    /// Oldest first: outcomes are kept in the order they are written.
    private var entries: [Entry] = []

    /// Notes an outcome written now, to remove at `removeAt`.
    mutating func keep(_ command: String, until removeAt: Date) {
        entries.append(Entry(removeAt: removeAt, command: command))
    }

    /// The commands whose outcome is due for removal at `now`, taken off the list.
    mutating func takeExpired(at now: Date) -> [String] {
        let count = entries.prefix { $0.removeAt <= now }.count
        defer { entries.removeFirst(count) }
        return entries.prefix(count).map(\.command)
    }

    /// The outcomes a previous scheduler wrote, each due `retentionSeconds` after its file's
    /// modification time.
    static func load(_ folder: String, retentionSeconds: TimeInterval) -> OutcomeRetention {
        var retention = OutcomeRetention()
        for name in (try? StateFiles.names(in: folder)) ?? [] where name.hasSuffix(".json") {
            var info = stat()
            guard lstat("\(folder)/\(name)", &info) == 0 else { continue }
            let written = Date(timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec))
            retention.entries.append(Entry(removeAt: written.addingTimeInterval(retentionSeconds), command: String(name.dropLast(5))))
        }
        retention.entries.sort { $0.removeAt < $1.removeAt }
        return retention
    }
}
