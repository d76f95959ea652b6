import ArgumentParser
import Foundation
import TaskState

/// `bgbench prediction`: usage prediction's freshness and cost beside two baselines, on a usage
/// trace replayed through the real scheduler core on a simulated clock.
struct PredictionBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prediction",
        abstract: "Replay a usage trace through the scheduler core: freshness and launches of usage prediction beside run-at-earliest and an hourly timer.",
        discussion: """
        Each app has one app refresh request. Policies: earliest (today, usagePrediction false: the handler \
        completes 5 s after its launch and resubmits with earliestBeginDate = now + --interval); hourly (a \
        systemd-style timer: one refresh per app every hour on the hour); prediction (as earliest, with \
        usagePrediction true and default settings; every open is fed to the core as an appUsed command when it \
        happens, so the first weeks are the model's warm-up). Freshness: the share of opens that had a refresh \
        of the app completed in the 30 minutes before. Cost: launches per app per day. Reported over the whole \
        trace and over its last --recent-weeks. No daemon, no processes, no files: the clock is simulated, in UTC.

        The default trace is synthetic, drawn from --seed: 20 apps of one person over --weeks weeks from Monday \
        2026-01-05, opens at a time ± noise (triangular) with a chance per day (70-95 % unless given): news weekdays 08:10±10 (90%), \
        weather daily 07:30±15, podcasts weekdays 08:40±10 and 17:50±15, lunch weekdays 12:15±15, tv daily \
        20:30±20, recipes weekdays 18:30±20 (60%), reader daily 22:45±15, calendar weekdays 08:55±5, fitness \
        Mon/Wed/Fri 06:45±10, bank weekdays 09:30±30 (50%), hiking Saturday 09:00±30, brunch Sunday 11:00±30, \
        scores weekends 15:00±60; messenger 6-10 opens a day and social 3-6 at random minutes of the day, mail \
        weekdays 09:00, 13:00, 17:00 ±20 plus 0-2 random opens; travel, taxes, photo-editor and parking 2-4 \
        times a month at random. See docs/performance.md.

        --trace FILE replays a file in LSApp's TSV layout instead (user_id, session_id, timestamp, app_name, \
        event_type; Opened rows count; timestamps YYYY-MM-DD HH:MM:SS read in UTC), each user on their own \
        (--user: only one). An app name becomes the identifier lsapp.NAME, NAME lowercased with every character \
        other than a-z, 0-9, '.', '-', '_' replaced by '-'. A malformed line stops the run, naming the line.
        """)

    @Option(help: "Seed of the synthetic trace.") var seed: UInt64 = 1
    @Option(help: "Weeks of the synthetic trace.") var weeks = 6
    @Option(help: "A trace in LSApp's TSV layout instead of the synthetic one.") var trace: String?
    @Option(help: "With --trace: only this user_id's rows.") var user: String?
    @Option(help: "Minutes from a refresh to the earliestBeginDate the app asks for next (earliest, prediction).") var interval = 15.0
    @Option(help: "The last weeks of the trace, reported apart (after the model's warm-up).") var recentWeeks = 2
    @Flag(help: "Also print each app's freshness and launches over the last --recent-weeks (one trace only).") var perApp = false

    func validate() throws {
        guard (1...52).contains(weeks) else { throw ValidationError("--weeks must be from 1 to 52") }
        guard interval.isFinite, (1...10_080).contains(interval) else { throw ValidationError("--interval must be from 1 to 10080 minutes") }
        guard (1...52).contains(recentWeeks) else { throw ValidationError("--recent-weeks must be from 1 to 52") }
    }

    func run() throws {
        let traces: [(user: String, trace: UsageTrace)]
        let source: String
        if let trace {
            do {
                traces = try UsageTrace.lsapp(path: trace, user: user).filter { !$0.trace.opens.isEmpty }
            } catch let malformed as LSAppTrace.Malformed {
                Console.error("\(trace): \(malformed)")
                throw ExitCode.failure
            } catch {
                Console.error("\(trace): \(error)")
                throw ExitCode.failure
            }
            guard !traces.isEmpty else {
                Console.error("\(trace): no Opened rows\(user.map { " of user \($0)" } ?? "")")
                throw ExitCode.failure
            }
            source = "\(trace), \(traces.count) user(s)"
        } else {
            traces = [("synthetic", SyntheticUsage.trace(weeks: weeks, seed: seed))]
            source = "synthetic, seed \(seed), \(weeks) weeks from 2026-01-05"
        }
        header(source: source, traces: traces.map(\.trace))
        let started = Date()
        var whole: [RefreshPolicy: FreshnessTally] = [:]
        var recent: [RefreshPolicy: FreshnessTally] = [:]
        var byApp: [Identifier: [RefreshPolicy: FreshnessTally]] = [:]
        for (user, usage) in traces {
            let recentStart = max(usage.start, usage.end.addingTimeInterval(-Double(recentWeeks) * 604_800))
            for policy in RefreshPolicy.allCases {
                var replay = UsageReplay(trace: usage, policy: policy, interval: interval * 60)
                replay.run()
                if let first = replay.firstAnomaly {
                    Console.error("user \(user), \(policy.rawValue): \(replay.anomalies) refused command(s) or unexpected effect(s); first: \(first)")
                }
                whole[policy, default: FreshnessTally()] = whole[policy, default: FreshnessTally()] + replay.tally(from: usage.start, to: usage.end)
                recent[policy, default: FreshnessTally()] = recent[policy, default: FreshnessTally()] + replay.tally(from: recentStart, to: usage.end)
                if perApp, traces.count == 1 {
                    for app in usage.apps { byApp[app, default: [:]][policy] = replay.tally(from: recentStart, to: usage.end, app: app) }
                }
            }
        }
        report("Whole trace", whole)
        report("Last \(recentWeeks) week(s) of each trace (the model warmed up)", recent)
        if !byApp.isEmpty { reportApps(byApp) }
        Console.line()
        Console.line(String(format: "replayed 3 policies in %.1f s", Date().timeIntervalSince(started))
                     + "; load at end: \(Machine.loadAverage) (1, 5, 15 min)")
    }

    private func header(source: String, traces: [UsageTrace]) {
        #if DEBUG
        let build = "DEBUG build: slow, use swift build -c release --product bgbench"
        #else
        let build = "release build"
        #endif
        let machine = Machine.describe(directory: NSTemporaryDirectory(), scratch: NSTemporaryDirectory())
        Console.line("bgbench prediction (\(build)), \(JSONFormat.string(from: Date()))")
        Console.line(machine.lines[0])
        let apps = traces.reduce(0) { $0 + $1.apps.count }
        let opens = traces.reduce(0) { $0 + $1.opens.count }
        let days = traces.reduce(0.0) { $0 + $1.days }
        Console.line("trace:       \(source); \(apps) app(s), \(opens) opens, \(String(format: "%.0f", days)) day(s)")
        Console.line("policies:    earliest: resubmit at now + \(String(format: "%g", interval)) min, usagePrediction false;")
        Console.line("             hourly: every hour on the hour; prediction: as earliest, usagePrediction true (default settings)")
        Console.line("freshness:   share of opens with a refresh of the app completed in the 30 min before;")
        Console.line("cost:        launches per app per day")
    }

    /// One row per app: freshness and launches a day under each policy, over the recent weeks.
    private func reportApps(_ byApp: [Identifier: [RefreshPolicy: FreshnessTally]]) {
        Console.line()
        Console.line("Each app, last \(recentWeeks) week(s): freshness % / launches per day")
        var rows = [["app", "opens"] + RefreshPolicy.allCases.map(\.rawValue)]
        for (app, tallies) in byApp.sorted(by: { $0.key < $1.key }) {
            rows.append([app.rawValue, String(tallies[.earliest]?.opens ?? 0)] + RefreshPolicy.allCases.map { policy in
                let tally = tallies[policy] ?? FreshnessTally()
                return tally.opens == 0 ? String(format: "- / %.1f", tally.cost) : String(format: "%.0f / %.1f", tally.freshness * 100, tally.cost)
            })
        }
        Console.table(rows)
    }

    private func report(_ title: String, _ tallies: [RefreshPolicy: FreshnessTally]) {
        Console.line()
        Console.line("\(title):")
        var rows = [["policy", "freshness", "fresh/opens", "launches/app/day", "launches"]]
        for policy in RefreshPolicy.allCases {
            let tally = tallies[policy] ?? FreshnessTally()
            rows.append([policy.rawValue, String(format: "%.1f %%", tally.freshness * 100), "\(tally.fresh)/\(tally.opens)",
                         String(format: "%.2f", tally.cost), String(tally.launches)])
        }
        Console.table(rows)
        guard let prediction = tallies[.prediction], let hourly = tallies[.hourly], let earliest = tallies[.earliest] else { return }
        Console.line(String(format: "  prediction ÷ hourly:   freshness %.2fx, launches %.2fx (goal: at least 1x as fresh, at most 0.33x the launches)",
                            prediction.freshness / hourly.freshness, Double(prediction.launches) / Double(max(hourly.launches, 1))))
        Console.line(String(format: "  prediction ÷ earliest: freshness %.2fx, launches %.2fx (goal: at least 2x as fresh, at most 1x the launches)",
                            prediction.freshness / earliest.freshness, Double(prediction.launches) / Double(max(earliest.launches, 1))))
    }
}
