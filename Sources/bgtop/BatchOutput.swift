import Dashboard
import Foundation

/// `bgtop --batch`: the dashboard drawn once into a tall grid, as plain text, like `top -b`.
enum BatchOutput {
    static func render(_ snapshot: DashboardSnapshot, width: Int) -> String {
        var state = DashboardState(readOnly: true)
        state.status = nil
        // Tall enough that every row of every panel fits.
        let rows = snapshot.pending.count + snapshot.tasks.count + snapshot.transfers.count + snapshot.apps.count + min(snapshot.events.count, 20)
        let height = max(DashboardLayout.minimumSize.height, rows * 2 + 24)
        var layoutHeight = height
        while layoutHeight > 24 {
            let layout = DashboardLayout(size: ScreenSize(width: width, height: layoutHeight))
            if layout.visibleRows(.pending) < snapshot.pending.count || layout.visibleRows(.running) < snapshot.tasks.count
                || layout.visibleRows(.transfers) < snapshot.transfers.count || layout.visibleRows(.apps) < snapshot.apps.count { break }
            layoutHeight -= 1
        }
        let size = ScreenSize(width: max(80, width), height: layoutHeight + 1)
        let grid = DashboardView.render(snapshot, state: state, size: size, theme: .monochrome, glyphs: .ascii)
        // The footer's key hints mean nothing in a snapshot.
        return grid.textLines.dropLast().map { line in
            var trimmed = line
            while trimmed.last == " " { trimmed.removeLast() }
            return trimmed
        }.joined(separator: "\n")
    }
}
