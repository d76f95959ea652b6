import Foundation
import Testing
import TaskState

/// The one escaping every terminal path uses (`bgctl` text output, `bgtop` cells).
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("\u{1b}[31mred", #"\x1b[31mred"#),
        ("a\nb\rc\td", #"a\nb\rc\td"#),
        ("\u{0}\u{7}\u{8}\u{b}\u{c}\u{1f}", #"\x00\x07\x08\x0b\x0c\x1f"#),
        ("del\u{7f}", #"del\x7f"#),
        ("csi\u{9b}2J nel\u{85} \u{80}\u{9f}", #"csi\x9b2J nel\x85 \x80\x9f"#),
        ("\r\n", #"\r\n"#),
    ])
    func controlCharactersAreWrittenOut(text: String, shown: String) {
        #expect(TerminalText.escaped(text) == shown)
        #expect(TerminalText.hasControl(text))
        #expect(!TerminalText.hasControl(TerminalText.escaped(text)), "escaping twice changes nothing more")
        #expect(TerminalText.escaped(TerminalText.escaped(text)) == shown)
    }

    @Test func printableTextIsKeptAsItIs() {
        for text in ["", "com.example.news", #"C:\x1b is text, not a control"#, "café ☕ 日本 \u{a0}é\u{301}", "…"] {
            #expect(TerminalText.escaped(text) == text)
            #expect(!TerminalText.hasControl(text))
        }
    }
}
