import Dashboard
import Foundation
import Testing
import TaskState

/// The help overlay, the footer and `bgtop --help` are drawn from the key table: every binding,
/// nothing else, in the table's words.
@Suite("The key table: help overlay, footer, --help")
struct KeyTableRenderingTests {
    static let sizes = [ScreenSize(width: 80, height: 24), ScreenSize(width: 160, height: 48)]

    private func render(_ state: DashboardState, size: ScreenSize, glyphs: Glyphs = .unicode) -> CellGrid {
        DashboardView.render(Fixtures.busy, state: state, size: size, theme: .builtInDefault, glyphs: glyphs)
    }

    /// The help overlay's binding rows, page by page (↓ scrolls where the screen is too short),
    /// each as (keys, help, style of the keys).
    private func helpPages(size: ScreenSize, readOnly: Bool) throws -> [(keys: String, help: String, style: CellStyle)] {
        var h = KeyHarness(state: DashboardState(readOnly: readOnly))
        h.size = size
        h.press(.character("?"))
        var shown: [(keys: String, help: String, style: CellStyle)] = []
        var previousFirst: String?
        while true {
            let grid = render(h.state, size: size)
            let lines = grid.textLines.map(Array.init)
            let top = try #require(lines.firstIndex { String($0).contains("╭─ Keys ") })
            let left = try #require(String(lines[top]).range(of: "╭─ Keys ").map { String(lines[top])[..<$0.lowerBound].count })
            let right = try #require(lines[top].indices.first { $0 > left && lines[top][$0] == "╮" })
            let bottom = try #require(lines.indices.first { $0 > top && lines[$0][left] == "╰" })
            // A blank row under the title and over the bottom border; bindings between them.
            #expect(String(lines[top + 1][(left + 1)..<right]).allSatisfy { $0 == " " })
            #expect(String(lines[bottom - 1][(left + 1)..<right]).allSatisfy { $0 == " " }, "a row the table does not have")
            var page: [(keys: String, help: String, style: CellStyle)] = []
            for y in (top + 2)..<(bottom - 1) {
                let line = lines[y]
                page.append((String(line[(left + 2)..<(left + 24)]).trimmingCharacters(in: .whitespaces),
                             String(line[(left + 25)..<right]).trimmingCharacters(in: .whitespaces), grid[left + 2, y].style))
            }
            guard page.first?.keys != previousFirst else { break }
            previousFirst = page.first?.keys
            // A scrolled page starts where the last one ended, or overlaps it at the end of the table.
            let overlap = shown.count - KeyBindings.table.firstIndex { $0.keys == page.first?.keys }!
            shown += page.dropFirst(max(0, overlap))
            guard shown.count < KeyBindings.table.count else { break }
            h.press(.pageDown)
        }
        return shown
    }

    @Test(arguments: sizes, [false, true])
    func theHelpOverlayListsExactlyTheTable(_ size: ScreenSize, _ readOnly: Bool) throws {
        let shown = try helpPages(size: size, readOnly: readOnly)
        let table = KeyBindings.table
        #expect(shown.map(\.keys) == table.map(\.keys))
        #expect(shown.map(\.help) == table.map(\.help))
        let enabled = try #require(shown.last?.style)  // q: never refused
        var disabled: CellStyle?
        for (binding, row) in zip(table, shown) {
            if readOnly && binding.refusedInReadOnly {
                #expect(row.style != enabled, "\(binding.keys) not greyed in read-only mode")
                #expect(disabled == nil || disabled == row.style)
                disabled = row.style
            } else {
                #expect(row.style == enabled, "\(binding.keys) greyed")
            }
        }
        #expect((disabled != nil) == readOnly)
    }

    @Test func theHelpScrollsOnAShortTerminalAndNotOnATallOne() throws {
        var short = KeyHarness()
        short.press(.character("?"))
        let rows = render(short.state, size: ScreenSize(width: 80, height: 24)).textLines
        #expect(rows.contains { $0.contains("/\(KeyBindings.table.count) ↑/↓ scroll") })
        short.press(.end)
        #expect(short.state.helpOffset > 0)
        let selected = short.selected(.pending)
        short.press(.down, .pageUp, .home)
        #expect(short.state.helpOffset == 0)
        #expect(short.selected(.pending) == selected, "scrolling the help moved the selection")
        var tall = KeyHarness()
        tall.size = ScreenSize(width: 160, height: 48)
        tall.press(.character("?"), .end)
        #expect(tall.state.helpOffset == 0)
        #expect(!render(tall.state, size: tall.size).textLines.contains { $0.contains("↑/↓ scroll") })
    }

    /// The footer's hints for `panel`, from the table: footer-marked bindings of that panel, by position.
    private func expectedFooter(_ panel: Panel, glyphs: Glyphs) -> [(key: String, label: String, refused: Bool)] {
        KeyBindings.table.enumerated()
            .filter { $0.element.footer != nil && $0.element.panels.contains(panel) }
            .sorted { ($0.element.footer!.position, $0.offset) < ($1.element.footer!.position, $1.offset) }
            .map { _, binding in
                let hint = binding.footer!
                return (hint.key(for: glyphs), hint.label, binding.refusedInReadOnly)
            }
    }

    @Test(arguments: Panel.allCases, [false, true])
    func theFooterShowsExactlyTheFooterMarkedBindings(_ panel: Panel, _ readOnly: Bool) {
        for glyphs in [Glyphs.unicode, .ascii] {
            var state = DashboardState(readOnly: readOnly)
            state.focus = panel
            let size = ScreenSize(width: 160, height: 48)
            let grid = render(state, size: size, glyphs: glyphs)
            let line = Array(grid.textLines[size.height - 1])
            // Words with the column each starts at.
            var words: [(text: String, x: Int)] = []
            for (x, character) in line.enumerated() where character != " " {
                if x > 0, line[x - 1] != " ", !words.isEmpty { words[words.count - 1].text.append(character) } else {
                    words.append((String(character), x))
                }
            }
            let expected = expectedFooter(panel, glyphs: glyphs)
            #expect(!expected.isEmpty)
            let shown = words.map(\.text)
            #expect(shown == expected.flatMap { [$0.key, $0.label] } + (readOnly ? ["read-only"] : []), "\(glyphs)")
            guard shown.count >= expected.count * 2 else { continue }
            let enabled = grid[words[shown.count - (readOnly ? 3 : 2)].x, size.height - 1].style  // q: never refused
            for (index, hint) in expected.enumerated() {
                let style = grid[words[2 * index].x, size.height - 1].style
                #expect((style == enabled) == !(readOnly && hint.refused), "\(hint.key) in \(panel)")
            }
        }
    }

    /// How a help label names a key.
    private static func name(_ trigger: KeyTrigger) -> String {
        guard case .key(let key) = trigger else { return "mouse" }
        switch key {
        case .character(let character): return String(character)
        case .up: return "Up"
        case .down: return "Down"
        case .left: return "Left"
        case .right: return "Right"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDn"
        case .home: return "Home"
        case .end: return "End"
        case .enter: return "Enter"
        case .escape: return "Esc"
        case .tab: return "Tab"
        case .backTab: return "Shift-Tab"
        case .backspace: return "Backspace"
        case .click, .wheelUp, .wheelDown: return "mouse"
        }
    }

    /// The keys a help label names: "Tab / Shift-Tab, 1-4" is Tab, Shift-Tab, 1, 2, 3, 4.
    private static func named(_ label: String) -> Set<String> {
        guard label.count > 1 else { return [label] }
        return Set(label.split { " /,".contains($0) }.flatMap { word -> [String] in
            let ends = Array(word)
            guard ends.count == 3, ends[1] == "-", let low = ends[0].asciiValue, let high = ends[2].asciiValue else { return [String(word)] }
            return (low...high).map { String(UnicodeScalar($0)) }
        })
    }

    @Test func eachHelpLabelNamesExactlyTheKeysOfItsBinding() {
        for binding in KeyBindings.table {
            #expect(Self.named(binding.keys) == Set(binding.triggers.map { Self.name($0.trigger) }), "\(binding.keys)")
            #expect(!binding.help.isEmpty && !binding.panels.isEmpty)
            if let footer = binding.footer {
                // The footer is read as key, word, key, word.
                #expect(![footer.key, footer.key(for: .ascii), footer.label].contains { $0.isEmpty || $0.contains(" ") })
            }
        }
    }

    @Test func theCommandLineHelpListsExactlyTheTable() throws {
        let lines = KeyBindings.commandLineHelp.components(separatedBy: "\n")
        let table = KeyBindings.table
        #expect(lines.count == table.count + 2)
        #expect(lines.first == "Keys:")
        for (line, binding) in zip(lines.dropFirst(), table) {
            #expect(line.hasPrefix("  \(binding.keys)  ") && line.hasSuffix("  \(binding.help)"), "\(line)")
        }
        let refused = table.filter(\.refusedInReadOnly).map(\.keys)
        #expect(refused.count > 1)
        #expect(lines.last == "With --read-only, \(refused.dropLast().joined(separator: ", ")) and \(refused.last!) are disabled.")
    }

    /// The built `bgtop`: beside the test bundle.
    private static func bgtop() throws -> String {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while true {
            let candidate = url.appendingPathComponent("bgtop")
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory), !isDirectory.boolValue,
               FileManager.default.isExecutableFile(atPath: candidate.path) {
                return candidate.path
            }
            let parent = url.deletingLastPathComponent()
            guard parent.path != url.path else { throw BgtopNotFound(near: CommandLine.arguments[0]) }
            url = parent
        }
    }

    private struct BgtopNotFound: Error, CustomStringConvertible {
        let near: String
        var description: String { "no built bgtop near \(near): build it with swift build --build-tests" }
    }

    @Test func bgtopHelpIsBuiltFromTheTable() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.bgtop())
        process.arguments = ["--help"]
        process.environment = ["PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains(KeyBindings.commandLineHelp), "\(text)")
        // Option help is wrapped to the terminal's width.
        let words = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("--read-only Show everything, change nothing: \(KeyBindings.refusedInReadOnlySummary) are disabled."))
        let refused = KeyBindings.table.filter(\.refusedInReadOnly).compactMap { $0.footer?.label }
        #expect(refused.count == KeyBindings.table.filter(\.refusedInReadOnly).count)
        #expect(refused.allSatisfy { KeyBindings.refusedInReadOnlySummary.contains($0) })
    }
}
