import FoundationEssentials
import TaskState

/// Where each pending row sits in ``DashboardSnapshot/pending``, for a reader that keeps one
/// snapshot current with ``DashboardSnapshot/editPending(_:)``: it turns "these rows changed"
/// into edits by position, without looking at the rows that did not.
public struct PendingRowPositions: Sendable {
    /// A row: a pending request or a held push (the two may share a key).
    public enum Row: Hashable, Sendable {
        case request(TaskKey)
        case push(TaskKey)
    }

    private var order: [Row] = []
    private var positions: [Row: Int] = [:]

    public init() {}

    public var count: Int { order.count }

    /// The edits that make the rows of `changed` read as `row` says now (nil: the row is gone),
    /// given the rows as they are (`current`, the snapshot's ``DashboardSnapshot/pending``). A
    /// row that reads the same is left alone.
    public mutating func edits(for changed: some Sequence<Row>, current: [DashboardSnapshot.PendingRow],
                               row: (Row) -> DashboardSnapshot.PendingRow?) -> [PendingRowEdit] {
        var edits: [PendingRowEdit] = []
        // The rows at positions these edits changed so far (`current` holds the others).
        var overlay: [Int: DashboardSnapshot.PendingRow] = [:]
        for key in changed {
            let new = row(key)
            if let index = positions[key] {
                if let new {
                    if overlay[index] ?? current[index] != new {
                        edits.append(.replace(at: index, with: new))
                        overlay[index] = new
                    }
                } else {
                    let last = order.count - 1
                    if index != last {
                        order[index] = order[last]
                        positions[order[index]] = index
                        overlay[index] = overlay[last] ?? current[last]
                    }
                    overlay[last] = nil
                    order.removeLast()
                    positions[key] = nil
                    edits.append(.remove(at: index))
                }
            } else if let new {
                positions[key] = order.count
                order.append(key)
                overlay[order.count - 1] = new
                edits.append(.append(new))
            }
        }
        return edits
    }
}
