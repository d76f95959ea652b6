import Foundation
@testable import SchedulerCore
import TaskState
import Testing

/// The turn's questions about transfers come from ``TransferSchedule``; these tests hold each
/// answer to a scan of every transfer record (the way it was first written), over seeded random
/// states of every transfer state, date, retry, relaunch delay, question, session and condition,
/// while the real turn (`effectsOfTime`) and random edits change the state between looks.
@Suite struct IndexedTransferTests {
    @Test(arguments: 0..<40) func theIndexAnswersAsAScanOfEveryTransfer(seed: UInt64) {
        var random = Seeded(seed &+ 1000)
        var state = Self.randomState(&random)
        for step in 0..<12 {
            let edges = state.transfers.values.flatMap { record in
                [record.earliestBeginDate, record.retryAt, record.relaunchDelayUntil, record.delayedRequestAnswerBy, record.resourceDeadline,
                 record.finishedAt.map { $0.addingTimeInterval(state.settings.finishedTransferRetentionSeconds) }].compactMap { $0 }
            }
            let now = random.below(2) == 0 && !edges.isEmpty ? edges.sorted()[random.below(edges.count)] : at(Double(random.below(400)))
            let busy = Set(state.transfers.keys.filter { _ in random.below(6) == 0 })
            let context = "seed \(seed), step \(step)"
            #expect(Set(state.startableTransfers(at: now, busy: busy)) == TransferScan.startable(state, at: now, busy: busy), "\(context): startable")
            #expect(Set(state.overdueTransfers(at: now)) == TransferScan.overdue(state, at: now), "\(context): overdue")
            #expect(Set(state.transfersToForget(at: now)) == TransferScan.toForget(state, at: now), "\(context): to forget")
            #expect(state.transferSchedule.running == Set(state.transfers.values.filter { $0.state == .running }.map(\.key)), "\(context): running")
            #expect(state.transferSchedule.questioned == Set(state.transfers.values.filter {
                $0.state == .waiting && (SchedulerState.isAwaitingAnswer($0) || SchedulerState.needsQuestion($0))
            }.map(\.key)), "\(context): questioned")
            #expect(state.transferSchedule.sessionEventsPending == Set(state.transfers.values.filter {
                $0.sessionSendsLaunchEvents == true && $0.eventsLaunchedAt == nil && $0.session != nil && ($0.state == .completed || $0.state == .failed)
            }.map(\.key)), "\(context): session events")
            #expect(state.nextTransferWake(after: now) == TransferScan.nextWake(state, after: now), "\(context): next wake")
            #expect(state.isWaitingOnConditions(at: now) == TransferScan.isWaitingOnConditions(state, at: now), "\(context): waiting on conditions")
            Self.mutate(&state, &random, now: now)
        }
    }

    static let apps = (0..<4).map { ident("com.example.transfers\($0)") }

    static func randomState(_ random: inout Seeded) -> SchedulerState {
        var snapshot = StateSnapshot()
        for index in 0..<(10 + random.below(30)) {
            snapshot.transfers.append(randomRecord(index: index, &random))
        }
        for app in apps where random.below(3) == 0 {
            snapshot.apps.append(AppRecord(id: app, enabled: random.below(2) == 0,
                                           throttledUntil: random.below(2) == 0 ? at(Double(random.below(500))) : nil))
        }
        let probed = Conditions(externalPower: random.below(2) == 0, network: random.below(3) != 0, idle: true,
                                lowPower: false, expensive: random.below(3) == 0)
        var record = ConditionsRecord(probed: probed, probedAt: t0)
        if random.below(2) == 0 { record.sources = ["power": "upower", "network": "networkmanager"] }
        snapshot.conditions = ConditionsRecord(probed: probed, overrides: IndexedTurnTests.randomOverrides(&random), probedAt: t0)
        var settings = SchedulerSettings()
        settings.finishedTransferRetentionSeconds = Double(50 + random.below(200))
        return SchedulerState(settings: settings, catalog: makeCatalog(), snapshot: snapshot, conditions: record)
    }

    static func randomRecord(index: Int, _ random: inout Seeded) -> TransferRecord {
        func maybeDate() -> Date? { random.below(3) == 0 ? at(Double(random.below(500)) - 50) : nil }
        let app = apps[random.below(apps.count)]
        let states: [TransferRecord.State] = [.waiting, .waiting, .waiting, .running, .paused, .completed, .failed, .cancelled]
        let state = states[random.below(states.count)]
        var record = TransferRecord(app: app, identifier: ident("\(app).t\(index)"), session: random.below(4) == 0 ? nil : "\(app).session",
                                    direction: .download, url: "https://example.com/\(index)", state: state,
                                    earliestBeginDate: maybeDate(), isDiscretionary: random.below(3) == 0,
                                    createdAt: at(-Double(random.below(300))), updatedAt: t0,
                                    timeoutIntervalForResource: Double(100 + random.below(600)), retryAt: maybeDate(),
                                    finishedAt: state.isActive ? nil : maybeDate() ?? (random.below(2) == 0 ? t0 : nil))
        record.allowsExpensiveNetworkAccess = [nil, true, false][random.below(3)]
        record.relaunchDelayUntil = maybeDate()
        record.sessionSendsLaunchEvents = random.below(2) == 0
        record.eventsLaunchedAt = random.below(3) == 0 ? at(1) : nil
        if random.below(3) == 0 {
            record.asksBeforeDelayedBegin = true
            if random.below(2) == 0 {
                record.delayedRequestAskedAt = at(0)
                record.delayedRequestAnswerBy = at(Double(random.below(300)))
                record.delayedRequestOutcome = random.below(3) == 0 ? DelayedRequestOutcome.allCases[random.below(DelayedRequestOutcome.allCases.count)] : nil
            }
        }
        return record
    }

    /// The real turn, a new or changed record, or one removed.
    static func mutate(_ state: inout SchedulerState, _ random: inout Seeded, now: Date) {
        switch random.below(4) {
        case 0:
            _ = state.effectsOfTime(at: now)
        case 1:
            if let key = state.transfers.keys.sorted().first(where: { _ in random.below(3) == 0 }) { state.removeTransfer(key) }
        default:
            state.setTransfer(randomRecord(index: random.below(60), &random))
        }
    }
}

/// The transfer questions answered by looking at every record: the oracle.
enum TransferScan {
    static func startable(_ state: SchedulerState, at now: Date, busy: Set<TaskKey>) -> Set<TaskKey> {
        Set(state.transfers.values.filter { $0.state == .waiting && !busy.contains($0.key) && state.transferBlockers(for: $0, at: now).isEmpty }.map(\.key))
    }

    static func overdue(_ state: SchedulerState, at now: Date) -> Set<TaskKey> {
        Set(state.transfers.values.filter { $0.state.isActive && $0.resourceDeadline <= now }.map(\.key))
    }

    static func toForget(_ state: SchedulerState, at now: Date) -> Set<TaskKey> {
        Set(state.transfers.values.filter { record in
            guard !record.state.isActive, let finished = record.finishedAt else { return false }
            return now.timeIntervalSince(finished) >= state.settings.finishedTransferRetentionSeconds
        }.map(\.key))
    }

    static func nextWake(_ state: SchedulerState, after now: Date) -> Date? {
        var candidates: [Date] = []
        for record in state.transfers.values {
            if record.state.isActive { candidates.append(record.resourceDeadline) }
            if let finished = record.finishedAt, !record.state.isActive {
                candidates.append(finished.addingTimeInterval(state.settings.finishedTransferRetentionSeconds))
            }
            guard record.state == .waiting else { continue }
            let blockers = state.transferBlockers(for: record, at: now)
            let timed: Set<TransferBlocker> = [.earliestBeginDate, .retryBackoff, .relaunchDelay, .awaitingAnswer]
            guard !blockers.isEmpty, blockers.allSatisfy(timed.contains) else { continue }
            let answerBy = SchedulerState.isAwaitingAnswer(record) ? record.delayedRequestAnswerBy : nil
            candidates.append(max(record.earliestBeginDate ?? now, record.retryAt ?? now, record.relaunchDelayUntil ?? now, answerBy ?? now))
        }
        return candidates.min()
    }

    static func isWaitingOnConditions(_ state: SchedulerState, at now: Date) -> Bool {
        let conditions = state.conditions
        let transferWaits = state.transfers.values.contains { record in
            guard record.state == .waiting else { return false }
            let blockers = state.transferBlockers(for: record, at: now)
            let probed = blockers.filter { ($0 == .network && !conditions.isSimulated(.network))
                || ($0 == .externalPower && !conditions.isSimulated(.power)) }
            let fromFiles = probed.contains { ($0 == .network && conditions.isProbedFromFiles(.network))
                || ($0 == .externalPower && conditions.isProbedFromFiles(.power)) }
            return fromFiles && blockers.allSatisfy { probed.contains($0) || $0 == .earliestBeginDate || $0 == .retryBackoff || $0 == .relaunchDelay }
        }
        // Requests and pushes answer the same either way: none in these states.
        return transferWaits || state.isPushWaitingOnConditions(at: now)
    }
}
