import Foundation

/// Writes the report to stdout as it goes, unbuffered, so a long run shows its progress.
enum Console {
    static func line(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data("bgbench: \(text)\n".utf8))
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
    /// The durable-submit table: bgtop's rows and SQLite's rows for one writer count.
    static func submitRows(bgtop: [DurableSubmits.Result], sqlite: [SQLitePeer.Result]) -> [[String]] {
        let wal = sqlite.first { $0.journalMode == "wal" }?.throughput.perSecond
        func versusWAL(_ rate: Double) -> String { wal.map { Format.ratio(rate / $0) } ?? "-" }
        var rows: [[String]] = []
        for result in bgtop {
            let system: String
            var note = ""
            switch result.mode {
            case .pipelined:
                system = "bgtop, enqueue back to back"
                note = "all enqueued (durable in inbox) at \(Format.seconds(result.enqueuedSeconds)) s"
            case .roundTrip:
                system = "bgtop, wait for each outcome"
                note = "round trip p50 \(Format.milliseconds(result.latencies.p50)) ms, p99 \(Format.milliseconds(result.latencies.p99)) ms"
            case .channelSend:
                system = "bgtop, CommandChannel.send (bgctl)"
                note = "\(result.throughput.operations) submits; round trip p50 \(Format.milliseconds(result.latencies.p50)) ms, "
                    + "p99 \(Format.milliseconds(result.latencies.p99)) ms"
            }
            if let cpu = result.schedulerCPU { note += "; bgtaskd CPU \(Format.seconds(cpu)) s" }
            if result.refused > 0 { note += "; REFUSED \(result.refused): \(result.firstRefusal ?? "?")" }
            rows.append([String(result.writers), system, Format.seconds(result.throughput.seconds),
                         Format.rate(result.throughput.perSecond), versusWAL(result.throughput.perSecond), note])
        }
        for result in sqlite {
            rows.append([String(result.writers), "SQLite \(result.journalMode.uppercased()), synchronous=FULL",
                         Format.seconds(result.throughput.seconds), Format.rate(result.throughput.perSecond),
                         versusWAL(result.throughput.perSecond), ""])
        }
        return rows
    }

    /// One latency row: p50, p99, max in milliseconds and the sample count.
    static func latencyRow(_ name: String, _ samples: Samples) -> [String] {
        [name, Format.milliseconds(samples.p50), Format.milliseconds(samples.p99),
         Format.milliseconds(samples.maximum), String(samples.count)]
    }

    /// The closing ratio lines for one writer count.
    static func ratioLine(writers: Int, bgtop: [DurableSubmits.Result], sqlite: [SQLitePeer.Result]) -> String {
        let label = writers == 1 ? "1 writer: " : "\(writers) writers:"
        var parts: [String] = []
        for result in bgtop {
            let how: String
            switch result.mode {
            case .pipelined: how = "back to back"
            case .roundTrip: how = "waiting for outcomes"
            case .channelSend: how = "CommandChannel.send"
            }
            let versus = sqlite.map { peer in
                "÷ SQLite \(peer.journalMode.uppercased()) = \(Format.ratio(result.throughput.perSecond / peer.throughput.perSecond))"
            }
            parts.append("bgtop \(how) \(versus.joined(separator: ", "))")
        }
        return "  \(label) " + parts.joined(separator: "; ")
    }
}
