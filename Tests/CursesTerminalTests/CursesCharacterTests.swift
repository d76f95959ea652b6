import CNcurses
import Dashboard
import Testing
@testable import CursesTerminal

@Suite("Glyphs")
struct CursesCharacterTests {
    /// A stand-in for wcwidth in a UTF-8 locale: CJK two columns, combining marks and VS16 none.
    private static func width(_ scalar: UInt32) -> Int32 {
        switch scalar {
        case 0x1100...0x115F, 0x2E80...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0x1F300...0x1FAFF: 2
        case 0x0300...0x036F, 0xFE00...0xFE0F, 0x200B...0x200F: 0
        default: 1
        }
    }

    private func glyph(_ character: Character, unicode: Bool = true) -> CursesCharacter {
        CursesCharacter.of(character, unicode: unicode, width: Self.width)
    }

    @Test func asciiIsItself() {
        #expect(glyph("a") == .text([0x61]))
        #expect(glyph("a", unicode: false) == .text([0x61]))
        #expect(glyph("~") == .text([0x7E]))
    }

    @Test func controlCharactersBecomeSpaces() {
        for character: Character in ["\t", "\n", "\r\n", "\u{1B}", "\u{7F}", "\u{85}"] {
            #expect(glyph(character) == .text([0x20]))
            #expect(glyph(character, unicode: false) == .text([0x20]))
        }
    }

    @Test func unicodeTextWithCombiningMarks() {
        #expect(glyph("é") == .text([0xE9]))
        #expect(glyph("e\u{301}") == .text([0x65, 0x301]))
        #expect(glyph("─") == .text([0x2500]))
        #expect(glyph("✔\u{FE0F}") == .text([0x2714]))
    }

    @Test func wideCharactersDoNotFitOneCell() {
        #expect(glyph("漢") == .text([0x3F]))
        #expect(glyph("😀") == .text([0x3F]))
    }

    @Test func withoutUnicodeLinesUseTheAlternateCharacterSet() {
        let expected: [(Character, Character)] = [
            ("─", "q"), ("│", "x"), ("┌", "l"), ("╭", "l"), ("┐", "k"), ("└", "m"), ("┘", "j"),
            ("├", "t"), ("┤", "u"), ("┬", "w"), ("┴", "v"), ("┼", "n"), ("█", "0"), ("░", "a"), ("•", "~"),
        ]
        for (character, letter) in expected {
            #expect(glyph(character, unicode: false) == .alternate(letter.asciiValue!), "\(character)")
        }
    }

    @Test func withoutUnicodeOtherCharactersBecomeASCII() {
        #expect(glyph("…", unicode: false) == .text([0x2E]))
        #expect(glyph("—", unicode: false) == .text([0x2D]))
        #expect(glyph("é", unicode: false) == .text([0x3F]))
        #expect(glyph("e\u{301}", unicode: false) == .text([0x65]))
        #expect(glyph("漢", unicode: false) == .text([0x3F]))
    }

    @Test func attributesOfStyles() {
        #expect(CursesStyles.attributes(of: .plain) == bg_a_normal())
        #expect(CursesStyles.attributes(of: CellStyle(bold: true)) == bg_a_bold())
        let all = CursesStyles.attributes(of: CellStyle(bold: true, dim: true, reverse: true, underline: true))
        #expect(all == bg_a_bold() | bg_a_dim() | bg_a_reverse() | bg_a_underline())
        // Colours never leak into the attributes: the pair goes separately.
        #expect(CursesStyles.attributes(of: CellStyle(foreground: .rgb(1, 2, 3))) == bg_a_normal())
    }
}
