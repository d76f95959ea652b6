import FoundationEssentials
import TaskState

/// How the dashboard shows an app's standing for VoIP pushes (``VoIPState``): a word in the
/// apps panel's PUSH column while something is wrong or owed, a line in the app's detail.
enum VoIPText {
    /// The PUSH column's word while the app's VoIP state needs attention, at most 5 cells:
    /// `block` (its VoIP pushes are dropped), `ring` (a call report is owed), `Nmiss` (failures to
    /// report in a row); `nil` when all is well.
    static func marker(_ voip: VoIPState?) -> String? {
        guard let voip else { return nil }
        if voip.isBlocked { return "block" }
        if voip.reportDueBy != nil { return "ring" }
        if voip.strikes > 0 { return "\(min(voip.strikes, 9))miss" }
        return nil
    }

    /// The detail view's line, once the app has had a VoIP push.
    static func detail(_ voip: VoIPState, date: (Date?) -> String) -> String {
        // Most telling first: the line is cut at the overlay's width.
        var parts: [String] = []
        if let blocked = voip.blockedSince {
            parts.append("dropped until a person uses the app (\(voip.strikes) unreported), since \(date(blocked))")
        } else if let due = voip.reportDueBy {
            parts.append("a call must be reported by \(date(due))")
        } else {
            parts.append(voip.strikes == 0 ? "delivered" : "delivered, \(voip.strikes) unreported in a row")
        }
        if let last = voip.lastReport {
            parts.append("last call \(date(last))" + (voip.lastNotifier.map { " (\($0))" } ?? ""))
        }
        return parts.joined(separator: ", ")
    }
}
