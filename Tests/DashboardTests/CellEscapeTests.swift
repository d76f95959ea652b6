@testable import Dashboard
import Foundation
import TaskState
import Testing

/// No cell of the dashboard's grid holds a control character, whatever text is put there: the
/// terminal backend copies cells to the screen as they are.
@Suite struct CellEscapeTests {
    static let hostile = "\u{1b}[31mRED\u{1b}]0;owned\u{07}\nforged\r\n\tx\u{9b}2J\u{7f}"

    private func controls(_ grid: CellGrid) -> [Character] {
        grid.cells.map(\.character).filter { character in
            character.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
        }
    }

    @Test func putWritesControlCharactersOut() {
        var grid = CellGrid(size: ScreenSize(width: 80, height: 2))
        let written = grid.put(Self.hostile, x: 0, y: 0, style: .plain)
        #expect(controls(grid).isEmpty)
        let row = String(grid.cells[0..<80].map(\.character))
        #expect(row.hasPrefix(#"\x1b[31mRED\x1b]0;owned\x07\nforged\r\n\tx\x9b2J\x7f"#), "\(row)")
        #expect(written == TerminalText.escaped(Self.hostile).count)
        // Clipped at maxWidth, still with nothing raw.
        var narrow = CellGrid(size: ScreenSize(width: 80, height: 1))
        #expect(narrow.put(Self.hostile, x: 0, y: 0, style: .plain, maxWidth: 3) == 3)
        #expect(String(narrow.cells[0..<3].map(\.character)) == #"\x1"#)
    }

    @Test func fitMeasuresWhatIsShown() {
        let fitted = TextFormat.fit("a\u{1b}b", 6)
        #expect(fitted == #"a\x1bb"#)
        #expect(TextFormat.fit("\u{1b}[2J", 5) == #"\x1b…"#)
        #expect(TextFormat.fitTail("x\u{1b}[2J", 5) == #"…b[2J"#)
        #expect(TextFormat.fit("plain", 7) == "plain  ")
    }
}
