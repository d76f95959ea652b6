import TaskState

/// A colour as a theme gives it: the terminal's own default, or 24-bit RGB that the terminal
/// backend steps down to what the terminal can show.
public enum TerminalColor: Hashable, Sendable {
    case terminalDefault
    case rgb(UInt8, UInt8, UInt8)
}

/// How one cell looks.
public struct CellStyle: Hashable, Sendable {
    public var foreground: TerminalColor
    public var background: TerminalColor
    public var bold: Bool
    public var dim: Bool
    public var reverse: Bool
    public var underline: Bool

    public init(foreground: TerminalColor = .terminalDefault, background: TerminalColor = .terminalDefault,
                bold: Bool = false, dim: Bool = false, reverse: Bool = false, underline: Bool = false) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.dim = dim
        self.reverse = reverse
        self.underline = underline
    }

    public static let plain = CellStyle()
}

/// One screen position: a single-column character and its style.
public struct Cell: Hashable, Sendable {
    public var character: Character
    public var style: CellStyle

    public init(_ character: Character = " ", style: CellStyle = .plain) {
        self.character = character
        self.style = style
    }
}

/// Width and height in cells.
public struct ScreenSize: Hashable, Sendable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// The dashboard's output: a grid of styled cells the terminal backend copies to the screen.
/// Everything the dashboard draws goes through here, which is what makes golden-screen tests possible.
public struct CellGrid: Hashable, Sendable {
    public let size: ScreenSize
    public private(set) var cells: [Cell]

    public init(size: ScreenSize, fill: Cell = Cell()) {
        self.size = size
        cells = Array(repeating: fill, count: max(0, size.width) * max(0, size.height))
    }

    public subscript(x: Int, y: Int) -> Cell {
        get { cells[y * size.width + x] }
        set {
            guard x >= 0, y >= 0, x < size.width, y < size.height else { return }
            cells[y * size.width + x] = newValue
        }
    }

    /// Writes `text` from (x, y) in `style`, clipped to `maxWidth` cells and the grid's edge.
    /// Control characters are written out (``TerminalText``): much of what is shown came from
    /// clients, and no cell may hold a byte the terminal would take as a command.
    /// Returns the number of cells written.
    @discardableResult
    public mutating func put(_ text: String, x: Int, y: Int, style: CellStyle, maxWidth: Int = .max) -> Int {
        guard y >= 0, y < size.height else { return 0 }
        var column = x
        let limit = maxWidth >= size.width ? size.width : min(size.width, x + max(0, maxWidth))
        for character in TerminalText.escaped(text) {
            guard column < limit else { break }
            if column >= 0 { self[column, y] = Cell(character, style: style) }
            column += 1
        }
        return max(0, column - x)
    }

    /// Paints a rectangle with one cell.
    public mutating func fill(x: Int, y: Int, width: Int, height: Int, with cell: Cell) {
        for row in max(0, y)..<min(size.height, y + height) {
            for column in max(0, x)..<min(size.width, x + width) { self[column, row] = cell }
        }
    }

    /// Changes the style of cells in a row range, keeping their characters.
    public mutating func restyle(x: Int, y: Int, width: Int, _ change: (inout CellStyle) -> Void) {
        guard y >= 0, y < size.height else { return }
        for column in max(0, x)..<min(size.width, x + width) {
            var cell = self[column, y]
            change(&cell.style)
            self[column, y] = cell
        }
    }

    /// The characters, one string per row (trailing spaces kept): the text half of a golden screen.
    public var textLines: [String] {
        (0..<size.height).map { row in String(cells[row * size.width..<(row + 1) * size.width].map(\.character)) }
    }
}
