import FoundationEssentials
import Synchronization
import TaskState

/// A panel's rows after filtering and sorting, identified by stable ids. Only the ids and sort
/// keys are computed for every row; cells are laid out for the visible ones only.
public struct PanelRows: Sendable {
    public var ids: [String]
    /// The position of each row in the snapshot's array for that panel.
    public var sourceIndices: [Int]

    public var count: Int { ids.count }
}

/// Sortable columns per panel: (title, how to compare).
enum SortColumns {
    static func titles(_ panel: Panel) -> [String] {
        switch panel {
        case .pending: return ["earliest", "app", "identifier", "kind", "submitted"]
        // CPU and memory sort highest first, as htop's do.
        case .running: return ["remaining", "app", "identifier", "elapsed", "pid", "cpu", "memory"]
        case .transfers: return ["progress", "app", "identifier", "state"]
        case .events: return ["newest", "type", "app"]
        case .apps: return ["app", "throttle", "last launch", "runs"]
        }
    }
}

extension DashboardSnapshot {
    /// The id of a row: stable across refreshes for the same item.
    static func rowID(_ key: TaskKey) -> String { "\(key.app)/\(key.identifier)" }

    /// Rows of `panel` matching `filter`, sorted by the state's sort column.
    public func rows(_ panel: Panel, state: DashboardState) -> PanelRows {
        let key = RowCache.Key(panel: panel, filter: state.filter, column: state.sortColumn[panel] ?? 0,
                               reversed: state.sortReversed[panel] ?? false)
        if panel == .pending { rowCache.lastPending.withLock { $0 = key } }
        if let cached = rowCache.storage.withLock({ $0[key] }) { return cached }
        let rows = computeRows(panel, state: state)
        rowCache.storage.withLock { $0[key] = rows }
        return rows
    }

    /// The filters of the pending views whose rows are held, sorted: what a change carries.
    public var cachedPendingViews: [String] {
        rowCache.storage.withLock { $0.keys.filter { $0.panel == .pending }.map(\.filter) }.sorted()
    }

    private func computeRows(_ panel: Panel, state: DashboardState) -> PanelRows {
        let needle = state.filter.lowercased()
        func matches(_ fields: String...) -> Bool {
            needle.isEmpty || fields.contains { $0.lowercased().contains(needle) }
        }
        let column = state.sortColumn[panel] ?? 0
        let reversed = state.sortReversed[panel] ?? false
        var indices: [Int]
        var ids: [Int: String] = [:]
        switch panel {
        case .pending:
            let rows = pending
            let conditions = rowConditions
            indices = rows.indices.filter { PendingOrder.matches(rows[$0], needle: needle, conditions: conditions) }
            indices.sort { PendingOrder.precedes(rows[$0], rows[$1], column: column) }
            for index in indices { ids[index] = Self.rowID(pending[index].request.key) }
        case .running:
            indices = tasks.indices.filter { index in
                let task = tasks[index]
                return matches(task.app.rawValue, task.identifier.rawValue, task.kind.rawValue, task.state.rawValue, "\(task.pid)")
            }
            indices.sort { a, b in
                let x = tasks[a], y = tasks[b]
                switch column {
                case 1: return (x.app, x.identifier) < (y.app, y.identifier)
                case 2: return (x.identifier, x.app) < (y.identifier, y.app)
                case 3: return (x.startedAt, x.app, x.identifier) < (y.startedAt, y.app, y.identifier)
                case 4: return (x.pid, x.app, x.identifier) < (y.pid, y.app, y.identifier)
                case 5, 6:
                    // No sample yet sorts last, as htop's new processes do.
                    let cpu = column == 5
                    let p = resources(of: x).map { cpu ? $0.cpuPercent ?? -1 : Double($0.memoryBytes) } ?? -2
                    let q = resources(of: y).map { cpu ? $0.cpuPercent ?? -1 : Double($0.memoryBytes) } ?? -2
                    return (-p, x.app, x.identifier) < (-q, y.app, y.identifier)
                default: return (x.deadline, x.app, x.identifier) < (y.deadline, y.app, y.identifier)
                }
            }
            for index in indices { ids[index] = Self.rowID(tasks[index].key) }
            // Launches being ended follow the tasks, whatever the order: they hold no budget.
            for (offset, launch) in endingLaunches.enumerated()
            where matches(launch.app.rawValue, launch.launchID, LaunchResources.Phase.ending.rawValue) {
                indices.append(tasks.count + offset)
                ids[tasks.count + offset] = "launch/\(launch.launchID)"
            }
        case .transfers:
            indices = transfers.indices.filter { index in
                let transfer = transfers[index]
                return matches(transfer.app.rawValue, transfer.identifier.rawValue, URLText.hidingCredentials(transfer.url), transfer.state.rawValue)
            }
            indices.sort { a, b in
                let x = transfers[a], y = transfers[b]
                switch column {
                case 1: return (x.app, x.identifier) < (y.app, y.identifier)
                case 2: return (x.identifier, x.app) < (y.identifier, y.app)
                case 3: return (x.state.rawValue, x.app, x.identifier) < (y.state.rawValue, y.app, y.identifier)
                default: return (Self.fraction(x), x.app, x.identifier) < (Self.fraction(y), y.app, y.identifier)
                }
            }
            for index in indices { ids[index] = Self.rowID(transfers[index].key) }
        case .events:
            indices = events.indices.filter { index in
                let event = events[index]
                return matches(event.type.rawValue, event.message, event.app?.rawValue ?? "")
            }
            // Newest first by default: the log reads top-down like a feed.
            indices.sort { a, b in
                let x = events[a], y = events[b]
                switch column {
                case 1: return (x.type.rawValue, b) < (y.type.rawValue, a)
                case 2: return (x.app?.rawValue ?? "", b) < (y.app?.rawValue ?? "", a)
                default: return a > b
                }
            }
            // Not the position in the window: that shifts as new events push old ones out.
            for index in indices {
                let event = events[index]
                ids[index] = "event-\(event.time.timeIntervalSince1970)-\(event.type.rawValue)-\(event.message.hashValue)"
            }
        case .apps:
            indices = apps.indices.filter { index in
                let row = apps[index]
                return matches(row.app.rawValue, row.record.enabled ? "enabled" : "disabled off",
                               row.isThrottled(at: now) ? "throttled" : "", row.problemText ?? "")
            }
            indices.sort { a, b in
                let x = apps[a], y = apps[b]
                switch column {
                // The latest release first (so the throttled apps), whatever the clock says now:
                // the rows are sorted once per change of data, not per tick.
                case 1: return ((x.record.throttledUntil ?? .distantPast), y.app) > ((y.record.throttledUntil ?? .distantPast), x.app)
                case 2: return ((x.record.lastLaunchAt ?? .distantPast), x.app) > ((y.record.lastLaunchAt ?? .distantPast), y.app)
                case 3: return (x.lastDay.launches, y.app) > (y.lastDay.launches, x.app)
                default: return x.app < y.app
                }
            }
            for index in indices { ids[index] = "app/\(apps[index].app)" }
        }
        if reversed { indices.reverse() }
        return PanelRows(ids: indices.map { ids[$0]! }, sourceIndices: indices)
    }

    static func fraction(_ transfer: TransferRecord) -> Double {
        guard let expected = transfer.bytesExpected, expected > 0 else { return 0 }
        return min(1, Double(transfer.bytesTransferred) / Double(expected))
    }
}

/// Memoised panel rows for one snapshot's data.
final class RowCache: Sendable {
    struct Key: Hashable, Sendable {
        var panel: Panel
        var filter: String
        var column: Int
        var reversed: Bool
    }

    let storage: Mutex<[Key: PanelRows]>
    /// The pending rows last asked for: the one view of them kept current change by change
    /// (``DashboardSnapshot/editPending(_:)``); others, a filter typed letter by letter say, are
    /// dropped at the next change rather than carried and edited for the rest of the session.
    let lastPending: Mutex<Key?>

    init(_ entries: [Key: PanelRows] = [:], lastPending: Key? = nil) {
        storage = Mutex(entries)
        self.lastPending = Mutex(lastPending)
    }

    /// A cache holding this one's entries but those of `panel`, which leave this one.
    func dropping(_ panel: Panel) -> RowCache {
        RowCache(takeAll().filter { $0.key.panel != panel }, lastPending: lastPending.withLock { $0 })
    }

    /// A cache holding this one's entries but the filtered ones of `panel`, which leave this one.
    func droppingFiltered(_ panel: Panel) -> RowCache {
        RowCache(takeAll().filter { $0.key.panel != panel || $0.key.filter.isEmpty }, lastPending: lastPending.withLock { $0 })
    }

    /// Every entry, leaving this cache empty: the rows move to a new snapshot's cache without a
    /// copy, and a snapshot still holding this one works its rows out again if asked.
    func takeAll() -> [Key: PanelRows] {
        storage.withLock { entries in
            defer { entries = [:] }
            return entries
        }
    }
}
