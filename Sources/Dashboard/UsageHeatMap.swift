import FoundationEssentials

/// An app's week of use in the detail view: seven rows (Monday first) of 24 hours, each hour a
/// block coloured by how likely a use is then (the theme's `temp` gradient), `··` for never.
enum UsageHeatMap {
    static let days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

    /// The detail lines the map takes: a heading with the hours, then one line per day, whose
    /// text ``draw(_:week:x:y:palette:)`` paints over.
    static func lines() -> [(String, String)] {
        // Two cells an hour: a mark every six hours.
        let scale = [0, 6, 12, 18].map { String($0).padded(toWidth: 12) }.joined()
        return [("week of use", scale + "(hours, local time)")] + days.map { ("  " + $0, String(repeating: " ", count: 48)) }
    }

    /// Paints the seven day rows, the first at `y`, from `x`; `week` holds 168 likelihoods.
    static func draw(_ grid: inout CellGrid, week: [Double], x: Int, y: Int, rows: Int, palette: Palette) {
        for day in 0..<min(7, rows) {
            for hour in 0..<24 {
                let likelihood = week.indices.contains(day * 24 + hour) ? week[day * 24 + hour] : 0
                let cell = likelihood < 0.01 ? "··" : "██"
                let style = likelihood < 0.01 ? palette.hint : palette.gradient("temp", likelihood)
                grid.put(cell, x: x + hour * 2, y: y + day, style: style)
            }
        }
    }
}
