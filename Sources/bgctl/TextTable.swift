import TaskState

/// Left-aligned columns for plain-text listings, like `ps`.
struct TextTable {
    var header: [String]
    var rows: [[String]] = []

    init(_ header: String...) {
        self.header = header
    }

    /// Adds a row; its cells are escaped here, as any of them may hold a client's text.
    mutating func add(_ row: String...) {
        rows.append(row.map(TerminalText.escaped))
    }

    func render() -> String {
        var widths = header.map(\.count)
        for row in rows {
            for (index, cell) in row.enumerated() where index < widths.count { widths[index] = max(widths[index], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var text = ""
            for (index, cell) in cells.enumerated() {
                if index == cells.count - 1 {
                    text += cell
                } else {
                    text += cell + String(repeating: " ", count: widths[index] - cell.count + 2)
                }
            }
            return text
        }
        return ([line(header)] + rows.map(line)).joined(separator: "\n")
    }
}
