import Foundation
import TaskState

/// A reason a waiting transfer does not start now, as shown in `bgctl list` and `bgtop`.
public enum TransferBlocker: String, Codable, Sendable, CaseIterable {
    /// Its `earliestBeginDate` has not come yet.
    case earliestBeginDate
    /// It failed transiently and waits out its retry backoff (`retryAt`).
    case retryBackoff
    /// Discretionary: it waits for external power.
    case externalPower
    /// Discretionary: it waits for a network.
    case network
    /// As many transfers as allowed are running.
    case concurrencyLimit
}

/// What to do with the transfers now: the pure decision the daemon carries out.
public struct TransferPlan: Hashable, Sendable {
    /// Waiting transfers to start now, in order.
    public var start: [TaskKey]
    /// Why each other waiting transfer waits (never empty for a key listed here).
    public var blocked: [TaskKey: [TransferBlocker]]
    /// Waiting or paused transfers whose resource deadline has passed: they fail for good
    /// (`TransferFailure.resourceTimedOut` in the engine's terms).
    public var expired: [TaskKey]
    /// The next time the plan changes by time alone; `nil` when only a condition or a command can.
    public var nextWake: Date?

    public init(start: [TaskKey], blocked: [TaskKey: [TransferBlocker]], expired: [TaskKey], nextWake: Date?) {
        self.start = start
        self.blocked = blocked
        self.expired = expired
        self.nextWake = nextWake
    }
}

/// Scheduling of background transfers: ordering, gating, concurrency and retry backoff.
/// Pure functions of the records, the conditions and the injected time.
public enum TransferScheduling {
    /// The first retry waits this long; each later one twice as long as the one before.
    public static let firstRetryDelay: TimeInterval = 1
    /// Retries never wait longer than this.
    public static let maximumRetryDelay: TimeInterval = 300

    /// Decides which waiting transfers start now and why the others wait.
    ///
    /// Running transfers take slots of `concurrencyLimit`. A waiting transfer starts only when
    /// its `earliestBeginDate` and `retryAt` have passed and, if discretionary, there is external
    /// power and a network. Among those, smaller expected sizes go first (the app's
    /// `countOfBytesClientExpectsToReceive/Send`, else `bytesExpected`; unknown sizes last), then
    /// older ones.
    public static func plan(_ transfers: [TransferRecord], conditions: Conditions, now: Date,
                            concurrencyLimit: Int) -> TransferPlan {
        var plan = TransferPlan(start: [], blocked: [:], expired: [], nextWake: nil)
        var wakes: [Date] = []
        var ready: [TransferRecord] = []
        let running = transfers.filter { $0.state == .running }.count
        for record in transfers {
            switch record.state {
            case .waiting, .paused:
                if now >= record.resourceDeadline {
                    plan.expired.append(record.key)
                    continue
                }
                wakes.append(record.resourceDeadline)
                guard record.state == .waiting else { continue }
                let blockers = blockers(of: record, conditions: conditions, now: now)
                if blockers.isEmpty {
                    ready.append(record)
                } else {
                    plan.blocked[record.key] = blockers
                    if let begin = record.earliestBeginDate, begin > now { wakes.append(begin) }
                    if let retry = record.retryAt, retry > now { wakes.append(retry) }
                }
            case .running:
                wakes.append(record.resourceDeadline)
            case .completed, .failed, .cancelled:
                continue
            }
        }
        let slots = max(0, concurrencyLimit - running)
        for (index, record) in ready.sorted(by: startsBefore).enumerated() {
            if index < slots {
                plan.start.append(record.key)
            } else {
                plan.blocked[record.key] = [.concurrencyLimit]
            }
        }
        plan.expired.sort()
        plan.nextWake = wakes.filter { $0 > now }.min()
        return plan
    }

    /// The reasons `record` (waiting) cannot start now, apart from the concurrency limit.
    public static func blockers(of record: TransferRecord, conditions: Conditions, now: Date) -> [TransferBlocker] {
        var blockers: [TransferBlocker] = []
        if let begin = record.earliestBeginDate, begin > now { blockers.append(.earliestBeginDate) }
        if let retry = record.retryAt, retry > now { blockers.append(.retryBackoff) }
        if record.isDiscretionary {
            if !conditions.externalPower { blockers.append(.externalPower) }
            if !conditions.network { blockers.append(.network) }
        }
        return blockers
    }

    /// The size used for ordering: the app's hint for the transfer's direction, else what is known.
    public static func sizeHint(of record: TransferRecord) -> Int64? {
        switch record.direction {
        case .download: return record.countOfBytesClientExpectsToReceive ?? record.bytesExpected
        case .upload: return record.countOfBytesClientExpectsToSend ?? record.bytesExpected
        }
    }

    /// How long to wait before the next attempt after `failures` transient failures in a row:
    /// 1 s, 2 s, 4 s … capped at 5 minutes.
    public static func retryDelay(afterFailures failures: Int) -> TimeInterval {
        guard failures > 0 else { return 0 }
        let exponent = min(failures - 1, 30)
        return min(maximumRetryDelay, firstRetryDelay * pow(2, Double(exponent)))
    }

    /// `record` after an attempt failed transiently with `reason`: waiting again with one more
    /// retry and its backoff, or failed for good when the retry would come after the resource
    /// deadline.
    public static func afterTransientFailure(_ record: TransferRecord, reason: String, now: Date) -> TransferRecord {
        var record = record
        record.retries += 1
        record.lastError = reason
        record.updatedAt = now
        record.bytesPerSecond = nil
        let retryAt = now.addingTimeInterval(retryDelay(afterFailures: record.retries))
        if retryAt >= record.resourceDeadline {
            record.state = .failed
            record.retryAt = nil
            record.finishedAt = now
            record.lastError = "\(reason); the resource timeout passes before the next retry"
        } else {
            record.state = .waiting
            record.retryAt = retryAt
        }
        return record
    }

    /// Whether `lhs` starts before `rhs` when both are ready.
    static func startsBefore(_ lhs: TransferRecord, _ rhs: TransferRecord) -> Bool {
        let left = sizeHint(of: lhs) ?? .max
        let right = sizeHint(of: rhs) ?? .max
        if left != right { return left < right }
        if lhs.createdAt != rhs.createdAt { return lhs.createdAt < rhs.createdAt }
        return lhs.key < rhs.key
    }
}
