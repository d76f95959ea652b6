import FoundationEssentials
import TaskState

/// Draws the log pager over the whole screen: the log's lines in a box titled with the log's
/// name, where the view is in the file on the bottom border, and the pager's keys under it.
enum LogPagerView {
    /// Lines of the log on screen at `size` (the box's borders and the hint line take three rows).
    static func rows(for size: ScreenSize) -> Int { max(1, size.height - 3) }

    static func draw(_ grid: inout CellGrid, pager: LogPager, palette: Palette, glyphs: Glyphs) {
        let width = grid.size.width
        let rows = rows(for: grid.size)
        let rect = Rect(x: 0, y: 0, width: width, height: rows + 2)
        grid.fill(x: 0, y: 0, width: width, height: grid.size.height, with: Cell(" ", style: palette.text))
        let title = "Log \(glyphs.horizontal) logs/\(pager.app).log \(glyphs.horizontal) \(pager.subject)"
        grid.box(rect, title: title, style: palette.title, titleStyle: palette.title, glyphs: glyphs)
        let state = pager.follow ? " following " : " paused "
        grid.put(state, x: width - state.count - 2, y: 0, style: pager.follow ? palette.good : palette.inactive)

        let inner = width - 4
        if let problem = pager.problem {
            grid.put(problem, x: 2, y: 1, style: palette.error, maxWidth: inner)
        } else if pager.lines.isEmpty {
            let text = pager.awaited != nil ? "reading…" : "the log is empty"
            grid.put(text, x: 2, y: 1, style: palette.inactive, maxWidth: inner)
        }
        let first = pager.firstVisible(rows: rows)
        let needle = pager.search.lowercased()
        for (row, line) in pager.lines.dropFirst(first).prefix(rows).enumerated() {
            let y = 1 + row
            let isMatch = line.offset == pager.match
            if isMatch { grid.put(String(glyphs.marker), x: 1, y: y, style: palette.hint) }
            let style = line.text.hasPrefix(LogMarker.prefix) ? palette.title : palette.text
            let text = safe(line.text)
            let shown = text.count > inner || line.isCut ? String(text.prefix(inner - 1)) : text
            grid.put(shown, x: 2, y: y, style: style, maxWidth: inner)
            if shown.count < text.count || line.isCut { grid.put("…", x: 2 + shown.count, y: y, style: palette.inactive) }
            if !needle.isEmpty { highlight(needle, in: shown, x: 2, y: y, grid: &grid, palette: palette) }
        }
        bottomBorder(&grid, pager: pager, first: first, rows: rows, y: rows + 1, palette: palette, glyphs: glyphs)
        hints(&grid, y: grid.size.height - 1, palette: palette, glyphs: glyphs)
    }

    /// Text from elsewhere (an excerpt that came over the network) is escaped again: nothing but
    /// printable characters reaches the terminal.
    private static func safe(_ text: String) -> String {
        text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
            ? LogText.displayable(Array(text.utf8)) : text
    }

    /// Shows where the search matches in a line.
    private static func highlight(_ needle: String, in text: String, x: Int, y: Int, grid: inout CellGrid, palette: Palette) {
        let lower = Array(text.lowercased())
        let pattern = Array(needle)
        // Lowercasing may change the length (rarely); then the positions would be off, so skip.
        guard lower.count == text.count, pattern.count <= lower.count else { return }
        var index = 0
        while index + pattern.count <= lower.count {
            if Array(lower[index..<index + pattern.count]) == pattern {
                grid.restyle(x: x + index, y: y, width: pattern.count) { style in style = palette.selected }
                index += pattern.count
            } else {
                index += 1
            }
        }
    }

    /// The search being typed or the pager's note on the left; the file's size and where the view
    /// is in it on the right.
    private static func bottomBorder(_ grid: inout CellGrid, pager: LogPager, first: Int, rows: Int, y: Int,
                                     palette: Palette, glyphs: Glyphs) {
        let width = grid.size.width
        var position = " \(TextFormat.bytes(pager.fileSize)) "
        let shown = pager.lines.dropFirst(first).prefix(rows)
        if let last = shown.last, pager.fileSize > 0 {
            let percent = SafeNumber.int(Double(last.end) / Double(pager.fileSize) * 100, .down)
            position = " \(TextFormat.bytes(pager.fileSize)) \(glyphs.horizontal) \(min(100, percent))% "
        }
        let positionX = width - position.count - 2
        grid.put(position, x: positionX, y: y, style: palette.inactive)
        let room = max(0, positionX - 3)
        if let draft = pager.searchDraft {
            let x = 2 + grid.put(" search: ", x: 2, y: y, style: palette.hint)
            grid.put(draft + "_ ", x: x, y: y, style: palette.text, maxWidth: max(0, positionX - x - 1))
        } else if let message = pager.message {
            grid.put(" " + message + " ", x: 2, y: y, style: palette.text, maxWidth: room)
        } else if !pager.search.isEmpty {
            grid.put(" search: \(pager.search) ", x: 2, y: y, style: palette.inactive, maxWidth: room)
        }
    }

    /// The hint line, from ``LogPagerKeys/table``: two spaces between hints where they fit, one
    /// where the terminal is narrow; narrower still, hints go from the middle.
    private static func hints(_ grid: inout CellGrid, y: Int, palette: Palette, glyphs: Glyphs) {
        var hints = LogPagerKeys.table.map { (key: $0.keys(for: glyphs), label: $0.label) }
        func width(gap: Int) -> Int { hints.reduce(1) { $0 + $1.key.count + 1 + $1.label.count + gap } }
        let gap = width(gap: 2) <= grid.size.width ? "  " : " "
        while width(gap: 1) > grid.size.width + 1, hints.count > 2 { hints.remove(at: hints.count / 2) }
        var x = 1
        for hint in hints {
            x += grid.put(hint.key, x: x, y: y, style: palette.hint)
            x += grid.put(" \(hint.label)\(gap)", x: x, y: y, style: palette.text)
        }
    }
}
