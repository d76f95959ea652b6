import LoopbackServer

/// The tables of `bgbench transfer-faults`: outcomes per fault case and runner, the totals, and
/// every trial worth a second look with the arguments that replay it.
struct FaultReport {
    /// One column of the report: a runner and what it did, or why it did not run.
    struct Runner {
        var name: String
        var results: Result<[TrialResult], Absence>
    }

    /// Why a runner has no results ("not installed", "skipped: --no-peers").
    struct Absence: Error {
        var reason: String
    }

    var runners: [Runner]

    /// Up to this many wrong or stuck bgtaskd trials are listed one by one at the end.
    static let listedInFull = 20

    /// Case × runner, each cell `exact/wrong/failed clearly/stuck`.
    func printPerCase() {
        let played = Set(runners.flatMap { (try? $0.results.get()) ?? [] }.map(\.trial.fault))
        var rows: [[String]] = [["case", "trials"] + runners.map(\.name)]
        for fault in FaultCase.allCases where played.contains(fault) {
            var row = [fault.rawValue + (fault.acceptableSeeds(seed: 0).isEmpty ? " (must fail)" : "")]
            var trials = 0
            for runner in runners {
                switch runner.results {
                case .success(let results):
                    let mine = results.filter { $0.trial.fault == fault }
                    trials = max(trials, mine.count)
                    row.append(TrialOutcome.allCases.map { outcome in String(mine.filter { $0.outcome == outcome }.count) }
                        .joined(separator: "/"))
                case .failure:
                    row.append("-")
                }
            }
            rows.append([row[0], String(trials)] + row.dropFirst())
        }
        Console.line("Per fault case (each cell: exact/wrong/failed clearly/stuck):")
        Console.table(rows)
    }

    /// Runner × outcome counts.
    func printTotals() {
        var rows: [[String]] = [["", "trials", "exact", "wrong", "failed clearly", "stuck", "of the failed: success was possible"]]
        for runner in runners {
            switch runner.results {
            case .success(let results):
                let counts = TrialOutcome.allCases.map { outcome in String(results.filter { $0.outcome == outcome }.count) }
                let avoidable = results.filter { $0.outcome == .failedClearly && !$0.trial.acceptableSeeds.isEmpty }.count
                rows.append([runner.name, String(results.count)] + counts + [String(avoidable)])
            case .failure:
                rows.append([runner.name] + Array(repeating: "-", count: rows[0].count - 1))
            }
        }
        Console.line("Totals:")
        Console.table(rows)
        for runner in runners {
            if case .failure(let absence) = runner.results { Console.line("  \(runner.name): \(absence.reason)") }
        }
    }

    /// Every wrong or stuck trial of bgtaskd (the ones that fail the run) when there are a few;
    /// otherwise, and for the peers, the first of each kind per case, so the report stays
    /// readable when a runner is often wrong (bgtaskd's were all printed as they happened).
    func printTroubles() {
        for runner in runners {
            guard case .success(let results) = runner.results else { continue }
            let troubles = results.filter { $0.outcome == .wrong || $0.outcome == .stuck }
            guard !troubles.isEmpty else { continue }
            Console.line()
            let everyOne = runner.name == "bgtaskd" && troubles.count <= Self.listedInFull
            Console.line("\(runner.name): \(troubles.count) wrong or stuck trial(s)\(everyOne ? "" : ", the first of each kind per case"):")
            var shown = Set<String>()
            for result in troubles {
                let kind = "\(result.trial.fault.rawValue) \(result.outcome.rawValue)"
                guard everyOne || shown.insert(kind).inserted else { continue }
                let count = troubles.filter { $0.trial.fault == result.trial.fault && $0.outcome == result.outcome }.count
                let times = everyOne || count == 1 ? "" : " (\(count) like it)"
                Console.line("  \(result.outcome.rawValue): \(result.trial)\(times)")
                Console.line("    \(result.detail)")
                Console.line("    replay: bgbench transfer-faults --replay \(result.trial.replayArgument)")
            }
        }
    }

    /// bgtaskd's wrong and stuck trials: the run fails when there is any.
    var daemonFailures: Int {
        guard let daemon = runners.first(where: { $0.name == "bgtaskd" }), case .success(let results) = daemon.results else { return 0 }
        return results.filter { $0.outcome == .wrong || $0.outcome == .stuck }.count
    }
}
