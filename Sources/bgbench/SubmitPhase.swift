import Foundation

/// Phase 1 as a whole: bgtop and SQLite measured in interleaved rounds (bgtop, SQLite WAL, SQLite
/// DELETE, for each writer count, then again), so that a disturbance on a shared machine hits
/// both sides alike; each figure is the median of the rounds, each ratio the median of the
/// per-round ratios. The rows where writers wait for each outcome run once, after the rounds.
struct SubmitPhase {
    var submitting: DurableSubmits
    var peer: SQLitePeer
    var writers: [Int]
    var rounds: Int
    var roundTrips: Bool

    /// One line of the table: a system at a writer count, with a rate per round.
    private struct Row {
        var writers: Int
        var system: String
        var rates: [Double] = []
        /// bgtaskd CPU milliseconds per submit, per round: in the program and in the kernel.
        var userCPU: [Double] = []
        var kernelCPU: [Double] = []
        var note: String?
    }

    /// Ratios of bgtop to a peer, one per round, for one writer count.
    private struct Ratios {
        var wal: [Double] = []
        var delete: [Double] = []
        /// `CommandChannel.sendAll` over SQLite WAL.
        var sendAll: [Double] = []
    }

    /// Runs the phase, prints its table, and returns the ratio lines for the end of the report.
    func run() throws -> [String] {
        var rows: [Row] = []
        var ratios: [Int: Ratios] = [:]
        func add(_ writers: Int, _ system: String, _ rate: Double, bgtop: DurableSubmits.Result? = nil, note: String? = nil) {
            let index: Int
            if let found = rows.firstIndex(where: { $0.writers == writers && $0.system == system }) {
                index = found
            } else {
                rows.append(Row(writers: writers, system: system))
                index = rows.count - 1
            }
            rows[index].rates.append(rate)
            if let cpu = bgtop?.schedulerCPU, let count = bgtop?.throughput.operations, count > 0 {
                rows[index].userCPU.append(cpu.user * 1000 / Double(count))
                rows[index].kernelCPU.append(cpu.system * 1000 / Double(count))
            }
            if let note { rows[index].note = note }
        }
        for _ in 0..<rounds {
            for count in writers {
                let bgtop = try submitting.run(writers: count, mode: .pipelined)
                try check(bgtop)
                let sendAll = try submitting.run(writers: count, mode: .socketPipelined)
                try check(sendAll)
                let wal = try peer.run(writers: count, journalMode: "WAL")
                let delete = try peer.run(writers: count, journalMode: "DELETE")
                add(count, "bgtop, enqueue back to back", bgtop.throughput.perSecond, bgtop: bgtop)
                add(count, "bgtop, sendAll, 16 in flight, command socket", sendAll.throughput.perSecond, bgtop: sendAll)
                add(count, "SQLite WAL, synchronous=FULL", wal.throughput.perSecond)
                add(count, "SQLite DELETE, synchronous=FULL", delete.throughput.perSecond)
                ratios[count, default: Ratios()].wal.append(bgtop.throughput.perSecond / wal.throughput.perSecond)
                ratios[count, default: Ratios()].delete.append(bgtop.throughput.perSecond / delete.throughput.perSecond)
                ratios[count, default: Ratios()].sendAll.append(sendAll.throughput.perSecond / wal.throughput.perSecond)
            }
        }
        var waiting: [Int: Double] = [:]
        var socket: [Int: Double] = [:]
        if roundTrips {
            for count in writers {
                let result = try submitting.run(writers: count, mode: .roundTrip)
                try check(result)
                waiting[count] = result.throughput.perSecond
                add(count, "bgtop, wait for each outcome", result.throughput.perSecond, bgtop: result, note: latencyNote(result))
                let send = try submitting.run(writers: count, mode: .channelSend)
                try check(send)
                socket[count] = send.throughput.perSecond
                add(count, "bgtop, CommandChannel.send (bgctl), command socket", send.throughput.perSecond, bgtop: send,
                    note: latencyNote(send))
            }
        }
        printTable(rows.sorted { $0.writers < $1.writers })
        return writers.map { count in
            let label = count == 1 ? "1 writer: " : "\(count) writers:"
            let round = ratios[count] ?? Ratios()
            var line = "  \(label) bgtop ÷ SQLite WAL = \(Self.summary(round.wal)); bgtop ÷ SQLite DELETE = \(Self.summary(round.delete))"
            line += "\n  \(String(repeating: " ", count: label.count)) sendAll, 16 in flight on the command socket ÷ SQLite WAL = \(Self.summary(round.sendAll))"
            if let rate = waiting[count], let wal = rows.first(where: { $0.writers == count && $0.system.hasPrefix("SQLite WAL") }) {
                line += "\n  \(String(repeating: " ", count: label.count)) waiting for each outcome ÷ SQLite WAL = "
                    + Format.ratio(rate / Samples(wal.rates).median)
            }
            if let rate = socket[count], let wal = rows.first(where: { $0.writers == count && $0.system.hasPrefix("SQLite WAL") }) {
                line += "\n  \(String(repeating: " ", count: label.count)) command socket, waiting for each outcome ÷ SQLite WAL = "
                    + Format.ratio(rate / Samples(wal.rates).median)
            }
            return line
        }
    }

    private func printTable(_ rows: [Row]) {
        var table = [["writers", "system", "submits/s", "rounds min-max", "vs SQLite WAL", "notes"]]
        for row in rows {
            let median = Samples(row.rates).median
            let wal = rows.first { $0.writers == row.writers && $0.system.hasPrefix("SQLite WAL") }.map { Samples($0.rates).median }
            let spread = row.rates.count > 1
                ? "\(Format.rate(row.rates.min() ?? 0))-\(Format.rate(row.rates.max() ?? 0))" : "(1 run)"
            var notes: [String] = []
            if !row.userCPU.isEmpty {
                notes.append(String(format: "bgtaskd CPU/submit %.2f ms user + %.2f ms kernel",
                                    Samples(row.userCPU).median, Samples(row.kernelCPU).median))
            }
            if let note = row.note { notes.append(note) }
            table.append([String(row.writers), row.system, Format.rate(median), spread,
                          wal.map { Format.ratio(median / $0) } ?? "-", notes.joined(separator: "; ")])
        }
        Console.table(table)
    }

    /// Refusals or missing requests make a row meaningless: stop with what went wrong.
    private func check(_ result: DurableSubmits.Result) throws {
        guard result.refused == 0, result.pendingRequests == result.throughput.operations else {
            throw BenchError("""
                \(result.writers) writer(s), \(result.mode.rawValue): \(result.refused) submits refused \
                (\(result.firstRefusal ?? "-")), \(result.pendingRequests) of \(result.throughput.operations) requests pending
                """)
        }
    }

    private func latencyNote(_ result: DurableSubmits.Result) -> String {
        "round trip p50 \(Format.milliseconds(result.latencies.p50)) ms, p99 \(Format.milliseconds(result.latencies.p99)) ms"
    }

    /// `0.82x (rounds 0.75x-0.90x)`, or just the ratio after one round.
    static func summary(_ values: [Double]) -> String {
        guard !values.isEmpty else { return "-" }
        let median = Format.ratio(Samples(values).median)
        guard values.count > 1 else { return median }
        return "\(median) (rounds \(Format.ratio(values.min() ?? 0))-\(Format.ratio(values.max() ?? 0)))"
    }
}
