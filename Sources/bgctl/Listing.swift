import FoundationEssentials
import SchedulerCore
import TaskState

/// The documented `bgctl list --json` schema (docs/cli.md). Fields are only ever added.
struct Listing: Encodable {
    struct Request: Encodable {
        var app: Identifier
        var identifier: Identifier
        var kind: TaskKind
        var earliestBeginDate: Date?
        var requiresNetworkConnectivity: Bool
        var requiresExternalPower: Bool
        var submittedAt: Date
        var blockers: [Blocker]
        /// When usage prediction holds it (`predictedUse`, `rarelyUsed`): when it may launch, and
        /// the use it prepares for.
        var plannedLaunchAt: Date?
        var predictedUseAt: Date?
        var predictionConfidence: Double?
        /// With the blocker `coalescing`: when the hold for other apps' requests ends at the latest.
        var coalescingUntil: Date?
    }

    struct Task: Encodable {
        var app: Identifier
        var identifier: Identifier
        var kind: TaskKind
        var state: LaunchedTask.State
        var pid: Int32
        var startedAt: Date
        var deadline: Date
        var simulated: Bool
        var launchReason: String
        var remainingSeconds: Double
        var expiringSince: Date?
        var killDeadline: Date?
        var name: String?
        /// From the resource monitor's last sample (`resources.json`) of the task's launch; absent
        /// until it has one. CPU seconds of the launch's whole process tree so far.
        var cpuSeconds: Double?
        /// CPU use over the last sample interval, in percent of one core.
        var cpuPercent: Double?
        /// Resident memory of the tree now, and the most it has held, in bytes.
        var memoryBytes: Int64?
        var peakMemoryBytes: Int64?
    }

    struct Transfer: Encodable {
        var app: Identifier
        var identifier: Identifier
        var state: TransferRecord.State
        var direction: TransferRecord.Direction
        var url: String
        var bytesTransferred: Int64
        var bytesExpected: Int64?
        var bytesPerSecond: Double?
        var session: String?
        var isDiscretionary: Bool
        var earliestBeginDate: Date?
        var retries: Int
        var retryAt: Date?
        var lastError: String?
        /// Why a waiting transfer has not started (empty for others, and for one about to start).
        var blockers: [TransferBlocker]
        /// Downloads: the SHA-256 the finished file must have; left out when none was asked for.
        var sha256: String?
        /// When the relaunch delay (`relaunchDelay`) ends; left out when there is none.
        var relaunchDelayUntil: Date?
        /// The HTTP method, when one was given.
        var method: String?
        /// The request's header fields, secret values shown as `redacted`; left out when none.
        var headers: [TransferHeader]?
        /// `willBeginDelayedRequest`: when the app was asked, until when its answer is waited
        /// for, and how the question ended; each left out when there is none.
        var delayedRequestAskedAt: Date?
        var delayedRequestAnswerBy: Date?
        var delayedRequestOutcome: DelayedRequestOutcome?
    }

    struct Push: Encodable {
        var app: Identifier
        var id: Identifier
        var priority: Int
        var receivedAt: Date
        var expiresAt: Date?
        var collapseId: String?
        var coalescedCount: Int
        var source: String?
        /// Why it is held (empty for one about to be delivered).
        var blockers: [PushBlocker]
        var payload: String
    }

    var format = JSONFormat.version
    var generatedAt: Date
    var requests: [Request]
    var tasks: [Task]
    var transfers: [Transfer]
    /// Background pushes held for delivery.
    var pushes: [Push]
    var unreadableFiles: [String]

    /// Builds the listing from a snapshot, with blockers computed by the scheduler's own policy.
    init(snapshot: StateSnapshot, settings: SchedulerSettings, catalog: ManifestCatalog, now: Date) {
        let state = SchedulerState(reading: snapshot, settings: settings, catalog: catalog, now: now)
        generatedAt = now
        let turn = state.launchTurn(at: now)
        requests = snapshot.requests.sorted { $0.key < $1.key }.map { request in
            let blockers = turn.blockers[request.key] ?? state.blockers(for: request, at: now)
            let plan = blockers.contains(where: \.isUsagePlan) ? state.usagePlan(for: request, at: now) : nil
            return Request(app: request.app, identifier: request.identifier, kind: request.kind,
                           earliestBeginDate: request.earliestBeginDate,
                           requiresNetworkConnectivity: request.requiresNetworkConnectivity,
                           requiresExternalPower: request.requiresExternalPower, submittedAt: request.submittedAt,
                           blockers: blockers, plannedLaunchAt: plan?.launchAt, predictedUseAt: plan?.predictedUse?.date,
                           predictionConfidence: plan?.predictedUse?.confidence,
                           coalescingUntil: blockers.contains(.coalescing) ? turn.coalescingEnds : nil)
        }
        tasks = snapshot.tasks.sorted { $0.key < $1.key }.map { task in
            let resources = snapshot.resources?.resources(of: task)
            return Task(app: task.app, identifier: task.identifier, kind: task.kind, state: task.state, pid: task.pid,
                        startedAt: task.startedAt, deadline: task.deadline, simulated: task.simulated,
                        launchReason: task.launchReason, remainingSeconds: task.remaining(at: now),
                        expiringSince: task.expiringSince, killDeadline: task.killDeadline, name: task.name,
                        cpuSeconds: resources?.cpuSeconds, cpuPercent: resources?.cpuPercent,
                        memoryBytes: resources?.memoryBytes, peakMemoryBytes: resources?.peakMemoryBytes)
        }
        transfers = snapshot.transfers.sorted { $0.key < $1.key }.map { transfer in
            Transfer(app: transfer.app, identifier: transfer.identifier, state: transfer.state,
                     direction: transfer.direction, url: URLText.hidingCredentials(transfer.url), bytesTransferred: transfer.bytesTransferred,
                     bytesExpected: transfer.bytesExpected, bytesPerSecond: transfer.bytesPerSecond, session: transfer.session,
                     isDiscretionary: transfer.isDiscretionary, earliestBeginDate: transfer.earliestBeginDate,
                     retries: transfer.retries, retryAt: transfer.retryAt, lastError: transfer.lastError,
                     blockers: transfer.state == .waiting ? state.transferBlockers(for: transfer, at: now) : [],
                     sha256: transfer.sha256, relaunchDelayUntil: transfer.relaunchDelayUntil, method: transfer.method,
                     headers: transfer.redactedHeaders, delayedRequestAskedAt: transfer.delayedRequestAskedAt,
                     delayedRequestAnswerBy: transfer.delayedRequestAnswerBy, delayedRequestOutcome: transfer.delayedRequestOutcome)
        }
        pushes = snapshot.pushes.sorted { ($0.app, $0.receivedAt, $0.id) < ($1.app, $1.receivedAt, $1.id) }.map { push in
            Push(app: push.app, id: push.id, priority: push.priority.rawValue, receivedAt: push.receivedAt,
                 expiresAt: push.expiresAt, collapseId: push.collapseID, coalescedCount: push.coalescedCount,
                 source: push.source, blockers: state.pushBlockers(for: push, at: now), payload: push.payload.text)
        }
        unreadableFiles = snapshot.unreadable.map(\.path)
    }
}
