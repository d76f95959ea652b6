import FoundationEssentials
import TaskState

/// One change to the pending panel's rows, as a reader that keeps its snapshot current applies
/// it: positions are into ``DashboardSnapshot/pending`` as it stands when the edit is applied.
public enum PendingRowEdit: Sendable {
    /// The row at a position now reads differently.
    case replace(at: Int, with: DashboardSnapshot.PendingRow)
    /// A new row, placed last in the array.
    case append(DashboardSnapshot.PendingRow)
    /// The row at a position is gone; the last row takes its position.
    case remove(at: Int)
}

extension DashboardSnapshot {
    /// Applies `edits` to ``pending`` and moves each changed row within the panel's sorted rows
    /// already worked out (a binary search per edit) instead of filtering and sorting every row
    /// again: with 100 000 requests a change then costs microseconds, not a full sort. The
    /// rows are the same as a full sort of the edited array would give (``PendingOrder``).
    public mutating func editPending(_ edits: [PendingRowEdit]) {
        guard !edits.isEmpty else { return }
        let conditions = rowConditions
        var carried = rowCache.takeAll()
        let lastPending = rowCache.lastPending.withLock { $0 }
        // Taken out of the snapshot so that, unless a copy of the snapshot shares them, both are
        // changed in place rather than copied.
        var rows = pendingRows
        pendingRows = []
        var sorted: [(key: RowCache.Key, rows: PanelRows, needle: String)] = []
        for (key, entry) in carried where key.panel == .pending {
            carried[key] = nil
            if key == lastPending { sorted.append((key, entry, key.filter.lowercased())) }
        }
        // An entry that does not hold a row where it should (which a correct edit never causes)
        // is dropped and worked out again in full when asked.
        var broken = Set<Int>()
        func unplace(_ row: PendingRow, at index: Int, unless kept: PendingRow? = nil) {
            for slot in sorted.indices where !broken.contains(slot) && PendingOrder.matches(row, needle: sorted[slot].needle, conditions: conditions) {
                if let kept, PendingOrder.matches(kept, needle: sorted[slot].needle, conditions: conditions) { continue }
                let key = sorted[slot].key
                let place = PendingOrder.place(of: row, in: sorted[slot].rows.sourceIndices, rows: rows, column: key.column, reversed: key.reversed)
                guard place < sorted[slot].rows.count, sorted[slot].rows.sourceIndices[place] == index else {
                    broken.insert(slot)
                    continue
                }
                sorted[slot].rows.sourceIndices.remove(at: place)
                sorted[slot].rows.ids.remove(at: place)
            }
        }
        func place(_ row: PendingRow, at index: Int, unless kept: PendingRow? = nil) {
            for slot in sorted.indices where !broken.contains(slot) && PendingOrder.matches(row, needle: sorted[slot].needle, conditions: conditions) {
                if let kept, PendingOrder.matches(kept, needle: sorted[slot].needle, conditions: conditions) { continue }
                let key = sorted[slot].key
                let place = PendingOrder.place(of: row, in: sorted[slot].rows.sourceIndices, rows: rows, column: key.column, reversed: key.reversed)
                sorted[slot].rows.sourceIndices.insert(index, at: place)
                sorted[slot].rows.ids.insert(Self.rowID(row.request.key), at: place)
            }
        }
        func renumber(_ row: PendingRow, from old: Int, to new: Int) {
            for slot in sorted.indices where !broken.contains(slot) && PendingOrder.matches(row, needle: sorted[slot].needle, conditions: conditions) {
                let key = sorted[slot].key
                let place = PendingOrder.place(of: row, in: sorted[slot].rows.sourceIndices, rows: rows, column: key.column, reversed: key.reversed)
                guard place < sorted[slot].rows.count, sorted[slot].rows.sourceIndices[place] == old else {
                    broken.insert(slot)
                    continue
                }
                sorted[slot].rows.sourceIndices[place] = new
            }
        }
        for edit in edits {
            switch edit {
            case .replace(let index, let row):
                let old = rows[index]
                if old.request == row.request && (old.push == nil) == (row.push == nil) {
                    // The same place in every order (a change of blockers): only a filter may now
                    // show or hide it.
                    unplace(old, at: index, unless: row)
                    rows[index] = row
                    place(row, at: index, unless: old)
                } else {
                    unplace(old, at: index)
                    rows[index] = row
                    place(row, at: index)
                }
            case .append(let row):
                rows.append(row)
                place(row, at: rows.count - 1)
            case .remove(let index):
                unplace(rows[index], at: index)
                let last = rows.count - 1
                if index != last {
                    renumber(rows[last], from: last, to: index)
                    rows.swapAt(index, last)
                }
                rows.removeLast()
            }
        }
        pendingRows = rows
        for (slot, entry) in sorted.enumerated() where !broken.contains(slot) { carried[entry.key] = entry.rows }
        rowCache = RowCache(carried, lastPending: lastPending)
    }
}
