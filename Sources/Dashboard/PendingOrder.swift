import FoundationEssentials
import TaskState

/// The pending panel's order and filter, one definition for the full sort (``DashboardSnapshot/rows(_:state:)``)
/// and for the rows placed one by one after a change (``DashboardSnapshot/editPending(_:)``), so both
/// give the same rows.
enum PendingOrder {
    /// Whether `x` sorts before `y` by sort column `column` (ascending). Ties on the column fall
    /// to app and identifier, then a request before a held push of the same name: a total order,
    /// so a row's place does not depend on where it sits in the snapshot's array.
    static func precedes(_ x: DashboardSnapshot.PendingRow, _ y: DashboardSnapshot.PendingRow, column: Int) -> Bool {
        let a = x.request, b = y.request
        let isPush = (x.push != nil, y.push != nil)
        let pushTie = !isPush.0 && isPush.1
        switch column {
        case 1:
            if a.app != b.app { return a.app < b.app }
            return a.identifier != b.identifier ? a.identifier < b.identifier : pushTie
        case 2:
            if a.identifier != b.identifier { return a.identifier < b.identifier }
            return a.app != b.app ? a.app < b.app : pushTie
        case 3:
            if a.kind != b.kind { return a.kind < b.kind }
        case 4:
            if a.submittedAt != b.submittedAt { return a.submittedAt < b.submittedAt }
        default:
            let p = a.readyDate, q = b.readyDate
            if p != q { return p < q }
        }
        if a.app != b.app { return a.app < b.app }
        return a.identifier != b.identifier ? a.identifier < b.identifier : pushTie
    }

    /// Whether `row` shows under the lowercased filter text `needle` (empty: every row), its
    /// condition blockers worked out under `conditions`.
    static func matches(_ row: DashboardSnapshot.PendingRow, needle: String, conditions: Conditions) -> Bool {
        guard !needle.isEmpty else { return true }
        let request = row.request
        let blockers = row.blockers(under: conditions)
        let fields = [request.app.rawValue, request.identifier.rawValue, request.kind.rawValue,
                      blockers.map(\.rawValue).joined(separator: " "),
                      row.pushBlockers.map(\.rawValue).joined(separator: " "),
                      row.push == nil ? row.labels(of: blockers).joined(separator: ", ") : row.pushBlockers.map(\.label).joined(separator: ", ")]
        return fields.contains { $0.lowercased().contains(needle) }
    }

    /// The first place in `order` (positions into `rows`, sorted by `column`, descending when
    /// `reversed`) whose row does not sort before `row`: where `row` is, or goes.
    static func place(of row: DashboardSnapshot.PendingRow, in order: [Int], rows: [DashboardSnapshot.PendingRow],
                      column: Int, reversed: Bool) -> Int {
        var low = 0, high = order.count
        while low < high {
            let middle = (low + high) / 2
            let other = rows[order[middle]]
            let before = reversed ? precedes(row, other, column: column) : precedes(other, row, column: column)
            if before { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
