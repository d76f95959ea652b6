/// A column of a panel's table: a fixed width, or a share of what is left.
struct Column {
    var title: String
    var width: Int
    var flex: Int

    static func fixed(_ title: String, _ width: Int) -> Column { Column(title: title, width: width, flex: 0) }
    static func flexible(_ title: String, minimum: Int, weight: Int = 1) -> Column { Column(title: title, width: minimum, flex: weight) }

    /// Final widths for `columns` in `total` cells, one space between columns.
    static func widths(_ columns: [Column], total: Int) -> [Int] {
        let gaps = max(0, columns.count - 1)
        let fixed = columns.reduce(0) { $0 + $1.width } + gaps
        let spare = max(0, total - fixed)
        let weights = columns.reduce(0) { $0 + $1.flex }
        var widths = columns.map { column in column.width + (weights > 0 ? spare * column.flex / weights : 0) }
        // Hand out the rounding remainder to the first flexible column.
        let used = widths.reduce(0, +) + gaps
        if let first = columns.firstIndex(where: { $0.flex > 0 }), used < total { widths[first] += total - used }
        // Too narrow for the minimums: take from the widest column until it fits.
        var overflow = widths.reduce(0, +) + gaps - total
        while overflow > 0, let widest = widths.indices.max(by: { widths[$0] < widths[$1] }), widths[widest] > 1 {
            widths[widest] -= 1
            overflow -= 1
        }
        return widths
    }
}

/// One cell of a table row; a `nil` style takes the row's style (selected or plain).
struct TableCell {
    var text: String
    var style: CellStyle?
    /// Cut from the left when too long: reverse-DNS names differ at their end
    /// (`…weather.refresh` tells more than `com.example.wea…`).
    var keepsTail: Bool
    /// For bars: cells from this offset on are the empty part, drawn in `emptyStyle`.
    var emptyFrom: Int?
    var emptyStyle: CellStyle?

    init(_ text: String, style: CellStyle? = nil, keepsTail: Bool = false) {
        self.text = text
        self.style = style
        self.keepsTail = keepsTail
    }

    /// A bar of `width` cells filled to `fraction`: the filled part in `style`, the rest in `emptyStyle`.
    static func bar(_ fraction: Double, width: Int, glyphs: Glyphs, style: CellStyle, emptyStyle: CellStyle) -> TableCell {
        var cell = TableCell(TextFormat.bar(fraction, width: width, glyphs: glyphs), style: style)
        cell.emptyFrom = Int((min(1, max(0, fraction)) * Double(width)).rounded())
        cell.emptyStyle = emptyStyle
        return cell
    }
}

extension CellGrid {
    /// Draws a box with a title in its top border.
    mutating func box(_ rect: Rect, title: String, style: CellStyle, titleStyle: CellStyle, glyphs: Glyphs) {
        guard rect.width >= 2, rect.height >= 2 else { return }
        let right = rect.x + rect.width - 1, bottom = rect.y + rect.height - 1
        for x in rect.x...right {
            self[x, rect.y] = Cell(glyphs.horizontal, style: style)
            self[x, bottom] = Cell(glyphs.horizontal, style: style)
        }
        for y in rect.y...bottom {
            self[rect.x, y] = Cell(glyphs.vertical, style: style)
            self[right, y] = Cell(glyphs.vertical, style: style)
        }
        self[rect.x, rect.y] = Cell(glyphs.topLeft, style: style)
        self[right, rect.y] = Cell(glyphs.topRight, style: style)
        self[rect.x, bottom] = Cell(glyphs.bottomLeft, style: style)
        self[right, bottom] = Cell(glyphs.bottomRight, style: style)
        put(" \(title) ", x: rect.x + 2, y: rect.y, style: titleStyle, maxWidth: rect.width - 4)
    }

    /// Writes one table row of `cells` at `y` inside `x ..< x + width`.
    mutating func tableRow(_ cells: [TableCell], widths: [Int], x: Int, y: Int, rowStyle: CellStyle, glyphs: Glyphs) {
        var column = x
        let right = x + widths.reduce(0, +) + max(0, widths.count - 1)
        let ellipsis: Character = glyphs == .ascii ? "~" : "…"
        for (index, cell) in cells.enumerated() where index < widths.count {
            let width = widths[index]
            let text = cell.keepsTail ? TextFormat.fitTail(cell.text, width, ellipsis: ellipsis)
                                      : TextFormat.fit(cell.text, width, ellipsis: ellipsis)
            put(text, x: column, y: y, style: cell.style ?? rowStyle,
                maxWidth: min(width, right - column))
            if let emptyFrom = cell.emptyFrom, let emptyStyle = cell.emptyStyle, emptyFrom < width {
                restyle(x: column + emptyFrom, y: y, width: min(width, right - column) - emptyFrom) { style in
                    style.foreground = emptyStyle.foreground
                }
            }
            column += width
            if index < widths.count - 1 {
                put(" ", x: column, y: y, style: rowStyle)
                column += 1
            }
        }
    }
}
