import Dashboard
import FoundationEssentials

/// `bgtop --batch`: the dashboard drawn once into a tall grid, as plain text, like `top -b`.
enum BatchOutput {
    static func render(_ snapshot: DashboardSnapshot, width: Int) -> String {
        var state = DashboardState(readOnly: true)
        state.status = nil
        // Tall enough that every row of every panel fits.
        let rows = snapshot.pending.count + snapshot.tasks.count + snapshot.transfers.count + snapshot.apps.count + min(snapshot.events.count, 20)
        let height = max(DashboardLayout.minimumSize.height, rows * 2 + 24)
        let width = max(80, width)
        // Checked with the layout the view draws with (its focus, its row counts): a short one
        // would make the unfocused boxes compact and drop their column headers.
        func fits(_ height: Int) -> Bool {
            let layout = DashboardLayout(size: ScreenSize(width: width, height: height), snapshot: snapshot, state: state)
            return Panel.allCases.allSatisfy(layout.showsColumnHeader)
                && layout.visibleRows(.pending) >= snapshot.pending.count && layout.visibleRows(.running) >= snapshot.tasks.count
                && layout.visibleRows(.transfers) >= snapshot.transfers.count && layout.visibleRows(.apps) >= snapshot.apps.count
        }
        var fitted = height
        while fitted > DashboardLayout.minimumSize.height, fits(fitted - 1) { fitted -= 1 }
        let size = ScreenSize(width: width, height: fitted)
        let grid = DashboardView.render(snapshot, state: state, size: size, theme: .monochrome, glyphs: .ascii)
        // The footer's key hints mean nothing in a snapshot.
        return grid.textLines.dropLast().map { line in
            var trimmed = line
            while trimmed.last == " " { trimmed.removeLast() }
            return trimmed
        }.joined(separator: "\n")
    }
}
