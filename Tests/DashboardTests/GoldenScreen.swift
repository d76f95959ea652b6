import Dashboard
import Foundation
import Testing

/// Golden screens: a rendered `CellGrid` written as text plus a style map, compared exactly with a
/// file in `Tests/DashboardTests/Golden/`. `BGTOP_UPDATE_GOLDEN=1` rewrites the files (and fails, so
/// a regeneration never passes silently); see Golden/README.md.
enum GoldenScreen {
    /// Ends every text and style row, so trailing spaces survive editors and the right edge shows.
    static let rowEnd = "¶"

    /// Letters for styles, in order of first appearance.
    static let symbols = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@#$%&*+=~^")

    /// The folder of golden files, found from this file's path.
    static let directory: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Golden", isDirectory: true)

    static var isUpdating: Bool { ProcessInfo.processInfo.environment["BGTOP_UPDATE_GOLDEN"] == "1" }

    /// The golden text of `grid`: header, text rows, style rows, legend.
    static func encode(_ grid: CellGrid, name: String) -> String {
        var letters: [CellStyle: Character] = [:]
        var legend: [(Character, CellStyle)] = []
        var styleRows: [String] = []
        for y in 0..<grid.size.height {
            var row = ""
            for x in 0..<grid.size.width {
                let style = grid[x, y].style
                if let letter = letters[style] {
                    row.append(letter)
                } else {
                    let letter = legend.count < symbols.count ? symbols[legend.count] : "?"
                    letters[style] = letter
                    legend.append((letter, style))
                    row.append(letter)
                }
            }
            styleRows.append(row)
        }
        var lines = ["# bgtop golden screen \(name), \(grid.size.width)x\(grid.size.height); rows end with \(rowEnd)", "-- text"]
        lines += grid.textLines.map { $0 + rowEnd }
        lines.append("-- styles")
        lines += styleRows.map { $0 + rowEnd }
        lines.append("-- legend")
        lines += legend.map { "\($0.0) \(describe($0.1))" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `fg=#cccccc bg=default bold`: colours, then the flags that are set.
    static func describe(_ style: CellStyle) -> String {
        var parts = ["fg=\(describe(style.foreground))", "bg=\(describe(style.background))"]
        if style.bold { parts.append("bold") }
        if style.dim { parts.append("dim") }
        if style.reverse { parts.append("reverse") }
        if style.underline { parts.append("underline") }
        return parts.joined(separator: " ")
    }

    static func describe(_ color: TerminalColor) -> String {
        switch color {
        case .terminalDefault: return "default"
        case let .rgb(r, g, b): return String(format: "#%02x%02x%02x", r, g, b)
        }
    }

    /// The first line where `expected` and `actual` differ, as a readable message; `nil` when equal.
    static func firstDifference(expected: String, actual: String) -> String? {
        guard expected != actual else { return nil }
        let old = expected.components(separatedBy: "\n"), new = actual.components(separatedBy: "\n")
        for index in 0..<max(old.count, new.count) {
            let a = index < old.count ? old[index] : "<end of file>"
            let b = index < new.count ? new[index] : "<end of file>"
            if a != b { return "line \(index + 1) differs\n  expected: \(a)\n  actual:   \(b)" }
        }
        return "files differ"
    }

    /// Compares `grid` with `Golden/<name>.golden`, recording an issue on any mismatch, on a
    /// missing file, and whenever the file was rewritten.
    static func assertMatches(_ grid: CellGrid, named name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let actual = encode(grid, name: name)
        let url = directory.appendingPathComponent("\(name).golden")
        if isUpdating {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                try actual.write(to: url, atomically: true, encoding: .utf8)
                Issue.record("golden updated; rerun without BGTOP_UPDATE_GOLDEN (\(url.path))", sourceLocation: sourceLocation)
            } catch {
                Issue.record("could not write golden \(url.path): \(error)", sourceLocation: sourceLocation)
            }
            return
        }
        guard let expected = try? String(contentsOf: url, encoding: .utf8) else {
            Issue.record("""
                missing golden \(url.path); create it with \
                BGTOP_UPDATE_GOLDEN=1 swift test --filter GoldenScreenTests, review it, then rerun
                """, sourceLocation: sourceLocation)
            return
        }
        if let difference = firstDifference(expected: expected, actual: actual) {
            Issue.record("""
                golden \(name) does not match (\(url.path)): \(difference)
                if the change is intended: BGTOP_UPDATE_GOLDEN=1 swift test --filter GoldenScreenTests, review with git diff, rerun
                """, sourceLocation: sourceLocation)
        }
    }
}
