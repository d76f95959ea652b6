import CNcurses
import Dashboard

extension CursesTerminal {
    /// Shows `grid`: writes only the cells that differ from the previous frame into ncurses'
    /// screen, then sends the difference to the terminal in one update (`wnoutrefresh` + `doupdate`),
    /// so nothing flickers. After a resize or Ctrl-L, clears and repaints everything. A grid smaller
    /// than the screen leaves the rest blank; a larger one is clipped. The bottom-right cell is
    /// written without scrolling the screen.
    public func draw(_ grid: CellGrid) {
        guard !isClosed else { return }
        let full = needsFullRepaint || previousFrame?.size != grid.size
        if full {
            werase(window)
            if needsFullRepaint { clearok(window, true) }
        }
        let rows = min(grid.size.height, size.height)
        let columns = min(grid.size.width, size.width)
        let width = grid.size.width
        let cells = grid.cells
        let previous = full ? nil : previousFrame?.cells
        for y in 0..<max(0, rows) {
            for x in 0..<max(0, columns) {
                let index = y * width + x
                if let previous, previous[index] == cells[index] { continue }
                put(cells[index], x: x, y: y)
            }
        }
        previousFrame = grid
        needsFullRepaint = false
        wnoutrefresh(window)
        doupdate()
    }

    /// Writes one cell into ncurses' screen (not yet to the terminal).
    private func put(_ cell: Cell, x: Int, y: Int) {
        var style = palette.resolve(cell.style)
        var characters: [wchar_t]
        switch CursesCharacter.of(cell.character, unicode: unicode) {
        case let .text(scalars):
            characters = scalars.map { wchar_t(bitPattern: $0) }
        case let .alternate(letter):
            let alternate = bg_acs(letter)
            characters = [wchar_t(bitPattern: alternate & bg_a_chartext())]
            style.attributes |= alternate & bg_a_attributes() & ~bg_a_chartext()
        }
        characters.append(0)
        var cchar = cchar_t()
        var pair = style.pair
        setcchar(&cchar, characters, style.attributes, 0, &pair)
        if y == size.height - 1, x == size.width - 1 {
            // Adding a character here would move the cursor past the end of the screen; inserting
            // does not move it (and pushes nothing on, being the last column).
            mvwins_wch(window, Int32(y), Int32(x), &cchar)
        } else {
            mvwadd_wch(window, Int32(y), Int32(x), &cchar)
        }
    }

    /// Repaints the last frame from scratch (Ctrl-L).
    func repaint() {
        needsFullRepaint = true
        if let frame = previousFrame { draw(frame) }
    }
}
