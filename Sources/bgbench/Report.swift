import Foundation

/// Writes the report to stdout as it goes, unbuffered, so a long run shows its progress.
enum Console {
    /// A closed stdout (`bgbench | head`) is not an error: the run goes on and cleans up.
    static func line(_ text: String = "") {
        try? FileHandle.standardOutput.write(contentsOf: Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data("bgbench: \(text)\n".utf8))
    }

    /// Rows padded into left-aligned columns, two spaces apart, indented.
    static func table(_ rows: [[String]], indent: String = "  ") {
        let widths = (0..<(rows.map(\.count).max() ?? 0)).map { column in
            rows.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        for row in rows {
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }
            line(indent + cells.joined(separator: "  "))
        }
    }
}

/// The lines of the report that turn measurements into text.
enum Report {
    /// One latency row: p50, p99, max in milliseconds and the sample count.
    static func latencyRow(_ name: String, _ samples: Samples) -> [String] {
        [name, Format.milliseconds(samples.p50), Format.milliseconds(samples.p99),
         Format.milliseconds(samples.maximum), String(samples.count)]
    }
}
