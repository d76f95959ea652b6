import Foundation
import LoopbackServer
import TortureCampaign

/// One download of the `transfer-faults` campaign: which misbehaviour the server plays, over which
/// generated entity, and where a first response breaks.
///
/// The same trial is played to every runner (bgtaskd, curl, wget), each at a path of its own:
/// routes with queued faults (``Route/nextRequests``) consume one per request, so two downloads
/// must never share one.
struct FaultTrial: Sendable, CustomStringConvertible {
    /// 1-based, in the order the plan drew it.
    var number: Int
    var fault: FaultCase
    /// Bytes of the entity.
    var size: Int64
    /// Where a first response that breaks mid-body closes (1..<size).
    var dropAt: Int64
    /// The seed of the entity's ``GeneratedBytes``; distinct per trial, so that the redirect
    /// hops of ``FaultCase/extraRoutes(path:size:seed:)`` (named by size and seed) never collide.
    var seed: UInt64

    /// The trial's download path for one runner.
    func path(runner: String) -> String {
        "/\(runner)/t\(number)/\(fault.rawValue)"
    }

    /// Installs the trial's routes for `runner` and returns the URL to download.
    ///
    /// Call it just before the download starts: a Retry-After date is computed when the routes
    /// are built.
    func serve(on server: LoopbackServer, runner: String) -> String {
        let path = path(runner: runner)
        for (routePath, route) in fault.routes(path: path, size: size, seed: seed, dropAt: dropAt) {
            server.setRoute(routePath, route)
        }
        return server.url(path)
    }

    /// The seeds of the representations a finished download may hold; empty when it must fail.
    var acceptableSeeds: [UInt64] { fault.acceptableSeeds(seed: seed) }

    /// The `--replay` value that plays this trial alone.
    var replayArgument: String { "\(fault.rawValue),\(size),\(dropAt),\(seed)" }

    var description: String {
        "trial \(number): case \(fault.rawValue), size \(size), dropAt \(dropAt), seed \(seed)"
    }

    /// Parses a `--replay` value, `CASE,SIZE,DROPAT,SEED`.
    init?(replay text: String) {
        let parts = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.count == 4, let fault = FaultCase(rawValue: parts[0]), let size = Int64(parts[1]),
              let dropAt = Int64(parts[2]), let seed = UInt64(parts[3]), size >= 2, (1..<size).contains(dropAt)
        else { return nil }
        self.init(number: 1, fault: fault, size: size, dropAt: dropAt, seed: seed)
    }

    init(number: Int, fault: FaultCase, size: Int64, dropAt: Int64, seed: UInt64) {
        self.number = number
        self.fault = fault
        self.size = size
        self.dropAt = dropAt
        self.seed = seed
    }
}

/// Draws a campaign's trials from a seeded generator, so a `--seed` replays the same plan.
enum TrialPlan {
    /// `count` trials: a case drawn uniformly from `cases`, a size uniform in `sizes`, a cut point
    /// uniform in 1..<size, a fresh seed.
    static func draw(count: Int, cases: [FaultCase], sizes: ClosedRange<Int64>,
                     using generator: inout SplitMix64) -> [FaultTrial] {
        var seeds = Set<UInt64>()
        return (1...count).map { number in
            let fault = cases.randomElement(using: &generator)!
            let size = Int64.random(in: sizes, using: &generator)
            let dropAt = Int64.random(in: 1..<size, using: &generator)
            // Distinct seeds and never a neighbour's: `changedEntityIgnoringIfRange` also serves seed + 1.
            var seed = generator.next()
            while seeds.contains(seed) || seeds.contains(seed &+ 1) || seeds.contains(seed &- 1) {
                seed = generator.next()
            }
            seeds.insert(seed)
            return FaultTrial(number: number, fault: fault, size: size, dropAt: dropAt, seed: seed)
        }
    }
}
