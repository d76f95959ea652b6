import ArgumentParser
import FoundationEssentials
import TaskState

/// `bgctl usage import FILE`: seeds usage prediction from a trace in LSApp's layout.
struct UsageImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load a history of uses from a trace in LSApp's TSV layout (user_id, session_id, timestamp, app_name, event_type).",
        discussion: """
        Only Opened rows count. App names become app identifiers through --map NAME=APP (repeatable) or
        --map-file FILE (one NAME<TAB>APP per line); rows of other names are skipped and listed on stderr.
        Timestamps are read in the local time zone (--utc: in UTC). A trace older than the year the scheduler
        keeps is moved forward by whole weeks, so that weekdays and hours stay as they were and its newest
        use lands in the last week (--no-shift keeps the dates; uses older than a year are then refused).
        """)

    @OptionGroup var locations: LocationOptions
    @Argument(help: "The trace file ('-' reads standard input).") var file: String
    @Option(help: "NAME=APP: the trace's app name and the app identifier it stands for.") var map: [String] = []
    @Option(name: .customLong("map-file"), help: "A file of NAME<TAB>APP lines.") var mapFile: String?
    @Option(help: "Only the rows of this user_id.") var user: String?
    @Flag(help: "Read timestamps in UTC instead of the local time zone.") var utc = false
    @Flag(name: .customLong("no-shift"), help: "Keep the trace's dates as they are.") var noShift = false

    func run() throws {
        let names = try readMap()
        let text = String(decoding: try read(file, what: "trace"), as: UTF8.self)
        let opens: [LSAppTrace.Open]
        do {
            opens = try LSAppTrace.opens(in: text, zone: utc ? .utc : .system)
        } catch {
            printError("\(file): \(error)")
            throw BGCtl.Exit.usage
        }
        var uses: [Identifier: [LSAppTrace.Open]] = [:]
        var unknown: [String: Int] = [:]
        for open in opens where user == nil || open.user == user {
            if let app = names[open.app] {
                uses[app, default: []].append(open)
            } else if unknown[open.app] == nil {
                unknown[open.app] = open.line
            }
        }
        let users = Set(opens.map(\.user))
        if user == nil && users.count > 1 {
            printError("note: the trace holds \(users.count) users' rows, imported as one history; --user ID keeps one")
        }
        for (name, line) in unknown.sorted(by: { $0.value < $1.value }) {
            printError("skipped '\(name)' (first on line \(line)): no --map for it")
        }
        guard !uses.isEmpty else {
            printError("no uses to import from \(file)")
            throw BGCtl.Exit.refused
        }
        let now = Date()
        let weeks = noShift ? 0 : Self.weeksToShift(newest: uses.values.flatMap { $0.map(\.date) }.max() ?? now, now: now)
        if weeks > 0 { print("moved the trace \(weeks) week(s) forward") }
        let zone: WallClockZone = utc ? .utc : .system
        // The scheduler keeps the last year: a use outside it is named and left out, the rest sent.
        let kept = now.addingTimeInterval(-UsageHistory.maximumAge)...now.addingTimeInterval(60)
        let sender = CommandSender(locations: locations)
        for (app, rows) in uses.sorted(by: { $0.key < $1.key }) {
            var moved: [Date] = []
            for row in rows {
                // By calendar weeks, so the local hour stays across daylight saving time.
                let date = zone.date(of: zone.time(of: row.date).addingDays(7 * weeks)) ?? row.date
                if kept.contains(date) {
                    moved.append(date)
                } else {
                    printError("line \(row.line): \(JSONFormat.string(from: date)) is outside the last year the scheduler keeps; left out")
                }
            }
            moved.sort()
            for start in stride(from: 0, to: moved.count, by: Int(NumericBounds.usesPerCommand.upperBound)) {
                let chunk = Array(moved[start..<min(moved.count, start + Int(NumericBounds.usesPerCommand.upperBound))])
                try sender.send(.appUsed(app: app, uses: chunk))
            }
        }
    }

    /// Whole weeks that bring `newest` into the last week before `now` (0 when it is there).
    static func weeksToShift(newest: Date, now: Date) -> Int {
        let behind = now.timeIntervalSince(newest)
        guard behind > 604_800 else { return 0 }
        return Int((behind / 604_800).rounded(.down))
    }

    private func readMap() throws -> [String: Identifier] {
        var pairs: [(String, String, String)] = map.map { entry in
            let parts = entry.split(separator: "=", maxSplits: 1).map(String.init)
            return (parts.first ?? "", parts.count == 2 ? parts[1] : "", "--map '\(entry)'")
        }
        if let mapFile {
            let text = String(decoding: try read(mapFile, what: "map file"), as: UTF8.self)
            for (index, line) in text.split(separator: "\n").enumerated() where !line.isEmpty {
                let parts = line.split(separator: "\t", maxSplits: 1).map(String.init)
                pairs.append((parts.first ?? "", parts.count == 2 ? parts[1] : "", "\(mapFile) line \(index + 1)"))
            }
        }
        var names: [String: Identifier] = [:]
        for (name, app, where_) in pairs {
            guard !name.isEmpty, let id = try? Identifier(validating: app) else {
                throw ValidationError("bad \(where_): expected NAME=APP with APP an app identifier")
            }
            names[name] = id
        }
        guard !names.isEmpty else { throw ValidationError("give --map NAME=APP or --map-file FILE: which app is which") }
        return names
    }

    /// What a trace or a map file, or standard input, may hold at most.
    static let maximumInput = 1 << 30

    private func read(_ path: String, what: String) throws -> Data {
        if path == "-" {
            guard let input = StandardStreams.readToEnd(maximumSize: Self.maximumInput) else {
                printError("cannot read the \(what): standard input holds more than \(Self.maximumInput) bytes")
                throw BGCtl.Exit.refused
            }
            return input
        }
        do {
            return try StateFiles.read(path, maximumSize: Self.maximumInput, followingLinks: true)
        } catch {
            printError("cannot read the \(what): \(error)")
            throw BGCtl.Exit.refused
        }
    }
}
