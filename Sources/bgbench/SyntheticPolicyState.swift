import Foundation
import SchedulerCore
import TaskState
import TortureCampaign

/// A scheduler's state in memory at a given size, the mix a busy desktop has: per app one app
/// refresh due later today and nine processing requests (some undated, waiting for an idle
/// machine; some dated, needing the network), and waiting transfers (dated, or backing off after
/// a failure). Nothing in it can launch, so turns over it stay comparable from one to the next.
enum SyntheticPolicyState {
    static let turnApp = identifier("com.example.turn")
    /// The identifiers the measured turns submit and cancel, one after another.
    static let turnIdentifiers = (0..<10).map { identifier("com.example.turn.job\($0)") }

    static func make(pending: Int, transfers: Int, now: Date, seed: UInt64 = 20, spread: Double = 86_400) -> SchedulerState {
        let parts = build(pending: pending, transfers: transfers, now: now, seed: seed, spread: spread)
        return SchedulerState(settings: SchedulerSettings(), catalog: ManifestCatalog(manifests: parts.manifests),
                              snapshot: parts.snapshot, conditions: parts.conditions)
    }

    /// The state's parts: what a state folder would hold, the apps' manifests, and conditions.
    /// Dated requests come due from a minute on, spread over `spread` seconds (a day; less than
    /// the coalescing window puts them all in one coalesced turn: a burst all due within the same minutes).
    static func build(pending: Int, transfers: Int, now: Date, seed: UInt64 = 20, spread: Double = 86_400)
        -> (snapshot: StateSnapshot, manifests: [Identifier: AppManifest], conditions: ConditionsRecord) {
        var random = SplitMix64(seed: seed)
        var snapshot = StateSnapshot()
        var manifests: [Identifier: AppManifest] = [:]
        let appCount = max(1, (pending + 9) / 10)
        func app(_ index: Int) -> Identifier { identifier("com.example.app\(index)") }
        for index in 0..<appCount {
            // Every app the scheduler has seen has a record (launches, throttling, attachments).
            snapshot.apps.append(AppRecord(id: app(index)))
            manifests[app(index)] = manifest(app(index), permitting: (0..<10).map { identifier("\(app(index)).job\($0)") })
        }
        manifests[turnApp] = manifest(turnApp, permitting: turnIdentifiers)
        for index in 0..<pending {
            let owner = app(index / 10)
            let slot = index % 10
            let later = now.addingTimeInterval(60 + Double(random.next() % UInt64(max(1, spread))))
            snapshot.requests.append(PendingRequest(
                app: owner, identifier: identifier("\(owner).job\(slot)"), kind: slot == 0 ? .appRefresh : .processing,
                earliestBeginDate: slot == 0 || slot >= 6 ? later : nil, requiresNetworkConnectivity: slot >= 6,
                requiresExternalPower: slot >= 3 && slot < 6, submittedAt: now))
        }
        for index in 0..<transfers {
            let owner = app(index % appCount)
            let later = now.addingTimeInterval(60 + Double(random.next() % 86_400))
            snapshot.transfers.append(TransferRecord(
                app: owner, identifier: identifier("\(owner).download\(index)"), session: "\(owner).session",
                direction: .download, url: "https://example.com/file\(index)", state: .waiting,
                earliestBeginDate: index % 2 == 0 ? later : nil, createdAt: now, updatedAt: now,
                retries: index % 2, retryAt: index % 2 == 1 ? later : nil))
        }
        // Busy: on power and online, but not idle, so undated processing waits for the machine.
        // (Overrides too, so that a real scheduler decides with the same conditions.)
        let busy = ConditionOverrides(externalPower: true, network: true, idle: false, lowPower: false, expensive: false)
        let conditions = ConditionsRecord(probed: Conditions(externalPower: true, network: true, idle: false), overrides: busy, probedAt: now)
        return (snapshot, manifests, conditions)
    }

    private static func manifest(_ app: Identifier, permitting identifiers: [Identifier]) -> AppManifest {
        AppManifest(id: app, executable: "/bin/true", permittedIdentifiers: identifiers,
                    backgroundModes: [.fetch, .processing])
    }

    static func identifier(_ text: String) -> Identifier {
        guard let value = try? Identifier(validating: text) else { preconditionFailure("not an identifier: \(text)") }
        return value
    }

    /// The command of measured turn number `turn`: a submit of one request of the turn app, then
    /// its cancel, so the state keeps its size.
    static func turnAction(_ turn: Int, start: Date) -> CommandAction {
        let identifier = turnIdentifiers[(turn / 2) % turnIdentifiers.count]
        return turn % 2 == 0
            ? .submit(SubmitRequest(app: turnApp, identifier: identifier, kind: .processing,
                                    earliestBeginDate: start.addingTimeInterval(3600), requiresNetworkConnectivity: true))
            : .cancel(app: turnApp, identifier: identifier)
    }
}
