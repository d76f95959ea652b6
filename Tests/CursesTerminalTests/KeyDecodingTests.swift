import CNcurses
import Dashboard
import Testing
@testable import CursesTerminal

@Suite("Key decoding")
struct KeyDecodingTests {
    static let printable: [(UInt32, Character)] = [
        (0x61, "a"), (0x20, " "), (0x7E, "~"), (0xE9, "é"), (0x6F22, "漢"), (0x1F600, "😀"),
    ]

    @Test(arguments: printable)
    func printableCharacters(value: UInt32, character: Character) {
        #expect(InputEvent.decodeCharacter(value) == .key(.character(character)))
    }

    @Test func controlCharacters() {
        #expect(InputEvent.decodeCharacter(0x0A) == .key(.enter))
        #expect(InputEvent.decodeCharacter(0x0D) == .key(.enter))
        #expect(InputEvent.decodeCharacter(0x1B) == .key(.escape))
        #expect(InputEvent.decodeCharacter(0x09) == .key(.tab))
        #expect(InputEvent.decodeCharacter(0x7F) == .key(.backspace))
        #expect(InputEvent.decodeCharacter(0x08) == .key(.backspace))
        #expect(InputEvent.decodeCharacter(0x0C) == .redraw)
        #expect(InputEvent.decodeCharacter(0x01) == .ignored)
        #expect(InputEvent.decodeCharacter(0x00) == .ignored)
        #expect(InputEvent.decodeCharacter(0x85) == .ignored)
        #expect(InputEvent.decodeCharacter(0xD800) == .ignored) // a lone surrogate is no character
    }

    @Test func keyCodes() {
        let expected: [(Int32, InputEvent)] = [
            (KEY_UP, .key(.up)), (KEY_DOWN, .key(.down)), (KEY_LEFT, .key(.left)), (KEY_RIGHT, .key(.right)),
            (KEY_PPAGE, .key(.pageUp)), (KEY_NPAGE, .key(.pageDown)),
            (KEY_HOME, .key(.home)), (KEY_END, .key(.end)), (KEY_FIND, .key(.home)), (KEY_SELECT, .key(.end)),
            (KEY_A1, .key(.home)), (KEY_C1, .key(.end)), (KEY_A3, .key(.pageUp)), (KEY_C3, .key(.pageDown)),
            (KEY_ENTER, .key(.enter)), (KEY_BTAB, .key(.backTab)), (KEY_BACKSPACE, .key(.backspace)),
            (KEY_MOUSE, .mouse), (KEY_RESIZE, .resize),
            (KEY_F0 + 1, .ignored), (KEY_DC, .ignored), (KEY_IC, .ignored),
        ]
        for (code, event) in expected {
            #expect(InputEvent.decodeKeyCode(code) == event, "key code \(code)")
        }
    }

    @Test func mouse() {
        #expect(InputEvent.decodeMouse(buttonState: bg_button1_pressed(), x: 3, y: 4) == .click(x: 3, y: 4))
        #expect(InputEvent.decodeMouse(buttonState: bg_button4_pressed(), x: 0, y: 9) == .wheelUp(x: 0, y: 9))
        #expect(InputEvent.decodeMouse(buttonState: bg_button5_pressed(), x: 7, y: 1) == .wheelDown(x: 7, y: 1))
        #expect(InputEvent.decodeMouse(buttonState: bg_report_mouse_position(), x: 7, y: 1) == nil)
        #expect(InputEvent.decodeMouse(buttonState: 0, x: 7, y: 1) == nil)
        #expect(InputEvent.decodeMouse(buttonState: bg_button1_pressed(), x: -1, y: 1) == nil)
    }

    @Test func extraSequencesAreEscapeSequencesForKnownKeys() {
        var seen = Set<String>()
        for extra in InputEvent.extraSequences {
            #expect(extra.sequence.hasPrefix("\u{1B}"))
            #expect(seen.insert(extra.sequence).inserted, "duplicate \(extra.sequence.debugDescription)")
            #expect(InputEvent.decodeKeyCode(extra.code) != .ignored)
        }
    }
}
