/// What a torture campaign found: the counts of its table and one line per finding.
public struct TortureReport: Sendable {
    /// What kind of promise a finding breaks.
    public enum Kind: String, Sendable, CaseIterable {
        /// Something acknowledged whose effect is absent.
        case lost
        /// Something applied, or launched, more often than it was asked for.
        case doubled
        /// A live process of the state directory that no task record or attachment names.
        case unsupervised
        /// A `bgtaskd` or `bgctl` that did not answer within its bound.
        case hang
        /// A `bgtaskd` that ended by itself (a signal it was not sent, or an exit of its own).
        case crash
    }

    public struct Finding: Sendable, CustomStringConvertible {
        public var kind: Kind
        /// The round it was seen in (the final audit counts as the round after the last).
        public var round: Int
        public var detail: String

        public var description: String { "\(kind.rawValue) (round \(round)): \(detail)" }
    }

    public var seed: UInt64
    public var rounds = 0
    public var restarts = 0
    /// Commands the campaign wrote into the inbox, and how many of them while no scheduler ran.
    public var commands = 0
    public var commandsWhileDown = 0
    /// Completions the apps sent with `bgctl complete`, and how many of those were acknowledged.
    public var appCompletions = 0
    public var appCompletionsAcknowledged = 0
    /// Processes the apps' launches started (from the app log).
    public var appLaunches = 0
    /// App processes no `launched` or `adopted` event names (started in a turn whose commit never
    /// happened); each that lives on is also an unsupervised finding.
    public var unrecordedLaunches = 0
    public var findings: [Finding] = []
    /// The folder the run used (kept when asked to, else removed).
    public var folder = ""

    public init(seed: UInt64) {
        self.seed = seed
    }

    public func count(_ kind: Kind) -> Int { findings.filter { $0.kind == kind }.count }

    /// The table: one header row and one row of figures.
    public var table: [[String]] {
        [
            ["rounds", "restarts", "commands", "lost", "doubled", "unsupervised", "hangs", "crashes", "seed"],
            [String(rounds), String(restarts), "\(commands) (\(commandsWhileDown) queued while down)", String(count(.lost)),
             String(count(.doubled)), String(count(.unsupervised)), String(count(.hang)), String(count(.crash)), String(seed)],
        ]
    }

    /// The table as aligned text, then the other figures and every finding.
    public var text: String {
        let rows = table
        let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
        var lines = rows.map { row in
            row.indices.map { row[$0].padding(toLength: widths[$0], withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        lines.append("app launches: \(appLaunches) (\(unrecordedLaunches) never recorded); app completions: \(appCompletions) sent, \(appCompletionsAcknowledged) acknowledged")
        for finding in findings { lines.append("! \(finding)") }
        return lines.joined(separator: "\n")
    }
}
