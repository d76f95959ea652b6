import Foundation
import Synchronization
import TaskState

/// The transfers of one session that an async call (`download(for:)`, `upload(for:fromFile:)`)
/// awaits: their ends go to the waiting call instead of the delegate, and a task made in the
/// same session for the same request while one is in flight is *promoted*: it becomes that
/// transfer, which then outlives the call (its end reaches the delegate, as any other's).
final class AwaitedTransfers: Sendable {
    /// How an awaited transfer's wait ended.
    enum Outcome: Sendable {
        /// The scheduler says it ended: completed, failed or cancelled.
        case ended(TransferRecord)
        /// It never reached the scheduler.
        case refused(BGURLSessionError)
        /// The awaiting task was cancelled; see ``decide(_:)``.
        case cancelled
    }

    /// What the session's delivery does with one record.
    enum Routing: Equatable {
        /// An ordinary transfer (or a promoted one): the delegate hears of it.
        case delegate
        /// Not for the delegate, and nothing to do (the waiter has it, or a decision is pending).
        case withheld
        /// A transfer whose waiter gave up without promoting it: acknowledge its end unheard.
        case acknowledgeUnheard
    }

    /// What makes two tasks of a session the same transfer: method, URL, header fields and, for
    /// an upload, the file. Header names compare without regard to case (RFC 9110 §5.1).
    struct Signature: Hashable, Sendable {
        let direction: TransferRecord.Direction
        let method: String
        let url: String
        let headers: [TransferHeader]
        let sourceFile: String?

        init(_ task: BGURLSessionTask) {
            direction = task.direction
            method = (task.requestMethod ?? (task.direction == .download ? "GET" : "PUT")).uppercased()
            url = task.originalURL.absoluteString
            headers = (task.requestHeaders ?? []).map { TransferHeader(name: $0.name.lowercased(), value: $0.value) }
                .sorted { ($0.name, $0.value) < ($1.name, $1.value) }
            sourceFile = task.sourceFile?.standardizedFileURL.path
        }

        /// Why `other` is not this request, naming what differs and never a header's value.
        func difference(from other: Signature) -> String {
            if direction != other.direction { return "it is \(other.direction.rawValue == "upload" ? "an" : "a") \(other.direction.rawValue)" }
            if method != other.method { return "its method is \(other.method), not \(method)" }
            if url != other.url { return "its URL differs" }
            if sourceFile != other.sourceFile { return "its file differs" }
            let names = Set(headers.map(\.name)).union(other.headers.map(\.name)).sorted()
            let differing = names.filter { name in
                headers.filter { $0.name == name } != other.headers.filter { $0.name == name }
            }
            return "header\(differing.count == 1 ? "" : "s") \(differing.joined(separator: ", ")) \(differing.count == 1 ? "differs" : "differ")"
        }
    }

    private enum Phase {
        /// Waiting for the transfer's end.
        case inFlight
        /// The awaiting task was cancelled; whether the transfer goes on is decided once every
        /// cancellation handler of that task has run.
        case cancelling
        /// The waiter has its outcome.
        case settled
    }

    private struct Entry {
        let signature: Signature
        var phase = Phase.inFlight
        var outcome: Outcome?
        var continuation: CheckedContinuation<Outcome, Never>?
        var promoted = false
    }

    private struct State {
        var entries: [String: Entry] = [:]
        /// Transfers given up without a promotion, whose end is acknowledged unheard.
        var abandoned: Set<String> = []
        /// Ends a waiter (or the abandonment) took: never the delegate's, even while the
        /// scheduler has not applied the acknowledgement yet.
        var taken: Set<String> = []
    }

    private let state = Mutex(State())

    /// An async call is about to hand `task` over and await it.
    func begin(_ task: BGURLSessionTask) {
        state.withLock { $0.entries[task.taskIdentifier] = Entry(signature: Signature(task)) }
    }

    /// Waits for the outcome of `identifier` (at once when it came first).
    func wait(_ identifier: String) async -> Outcome {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Outcome? in
                guard var entry = state.entries[identifier] else { return .cancelled }
                if let outcome = entry.outcome { return outcome }
                entry.continuation = continuation
                state.entries[identifier] = entry
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The awaiting task was cancelled: its wait ends with ``Outcome/cancelled`` unless the
    /// transfer's end came first.
    func cancel(_ identifier: String) {
        settle(identifier, .cancelled, phase: .cancelling)
    }

    /// The scheduler refused the transfer (or the library did): the waiter hears it instead of
    /// the delegate. `false` when no call awaits `identifier`.
    func refuse(_ identifier: String, _ error: BGURLSessionError) -> Bool {
        guard state.withLock({ $0.entries[identifier] != nil }) else { return false }
        settle(identifier, .refused(error), phase: .settled)
        return true
    }

    /// Where the session's delivery sends `record`. An end of an awaited transfer goes to its waiter here.
    func route(_ record: TransferRecord) -> Routing {
        let id = record.identifier.rawValue
        let (routing, continuation) = state.withLock { state -> (Routing, CheckedContinuation<Outcome, Never>?) in
            if state.taken.contains(id) { return (.withheld, nil) }
            if state.abandoned.contains(id) {
                guard !record.state.isActive else { return (.withheld, nil) }
                state.abandoned.remove(id)
                state.taken.insert(id)
                return (.acknowledgeUnheard, nil)
            }
            guard var entry = state.entries[id] else { return (.delegate, nil) }
            switch entry.phase {
            case .cancelling, .settled:
                return (entry.promoted ? .delegate : .withheld, nil)
            case .inFlight:
                guard !record.state.isActive else { return (entry.promoted ? .delegate : .withheld, nil) }
                entry.phase = .settled
                let continuation = entry.continuation
                entry.continuation = nil
                if continuation == nil { entry.outcome = .ended(record) }
                state.entries[id] = entry
                // A promoted transfer is the delegate's too; otherwise only the waiter hears of it.
                if !entry.promoted { state.taken.insert(id) }
                return (entry.promoted ? .delegate : .withheld, continuation)
            }
        }
        continuation?.resume(returning: .ended(record))
        return routing
    }

    /// The transfer a task for `task`'s request would promote: one in flight whose request is
    /// the same. Otherwise, when some are in flight, why the nearest is not the same.
    func promotionTarget(for task: BGURLSessionTask) -> (identifier: String?, mismatch: (identifier: String, reason: String)?) {
        let signature = Signature(task)
        return state.withLock { state in
            let open = state.entries.filter { $0.value.phase != .settled || $0.value.promoted }.sorted { $0.key < $1.key }
            if let same = open.first(where: { $0.value.signature == signature }) { return (same.key, nil) }
            let nearest = open.first { $0.value.signature.url == signature.url } ?? open.first
            return (nil, nearest.map { ($0.key, $0.value.signature.difference(from: signature)) })
        }
    }

    /// A task made by ``promotionTarget(for:)`` was resumed: the transfer outlives its waiter.
    /// `false` when there is nothing left to promote (its end was already returned).
    func promote(_ identifier: String) -> Bool {
        state.withLock { state in
            guard var entry = state.entries[identifier], !state.taken.contains(identifier) else { return false }
            entry.promoted = true
            state.entries[identifier] = entry
            return true
        }
    }

    /// The waiting call was cancelled and every cancellation handler of its task has run: `true`
    /// when the transfer was promoted meanwhile (it goes on, and is the delegate's from now on);
    /// `false` when it is abandoned (the caller cancels it; its end is acknowledged unheard).
    func decide(_ identifier: String) -> Bool {
        state.withLock { state in
            guard let entry = state.entries.removeValue(forKey: identifier) else { return false }
            if entry.promoted { return true }
            state.abandoned.insert(identifier)
            return false
        }
    }

    /// The waiter has taken the end of `identifier` and is acknowledging it.
    func finish(_ identifier: String) {
        state.withLock { state in
            if state.entries.removeValue(forKey: identifier)?.promoted != true { state.taken.insert(identifier) }
        }
    }

    private func settle(_ identifier: String, _ outcome: Outcome, phase: Phase) {
        let continuation = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
            guard var entry = state.entries[identifier], entry.phase == .inFlight else { return nil }
            entry.phase = phase
            let continuation = entry.continuation
            entry.continuation = nil
            if continuation == nil { entry.outcome = outcome }
            state.entries[identifier] = entry
            return continuation
        }
        continuation?.resume(returning: outcome)
    }
}
