import Foundation
import Synchronization
import TaskState

/// A task the scheduler handed to this process: run the work, then call
/// ``setTaskCompleted(success:)``. Set ``expirationHandler`` first thing: when the runtime budget
/// runs out it is called, and the task must be completed promptly or the process is killed and
/// the app throttled.
public class BGTask: @unchecked Sendable, CustomStringConvertible {
    /// The identifier the request was submitted with.
    public let identifier: String
    let kind: TaskKind
    /// Tells the scheduler: whether it succeeded, and for a push's task the fetch result.
    private let completion: @Sendable (_ success: Bool, _ answer: FetchResult?) -> Void
    private let guarded = Mutex<Guarded>(Guarded())

    private struct Guarded {
        var expirationHandler: (@Sendable () -> Void)?
        var expired = false
        var completed = false
    }

    init(identifier: String, kind: TaskKind, completion: @escaping @Sendable (_ success: Bool, _ answer: FetchResult?) -> Void) {
        self.identifier = identifier
        self.kind = kind
        self.completion = completion
    }

    /// Called when the task's budget runs out, on a thread of the library's own (not the queue
    /// the launch handler runs on), so it runs even while the handler is busy. Keep it short:
    /// stop the work and complete the task.
    ///
    /// Unlike on Apple's systems, a handler set after the expiration has already been delivered
    /// is called at once, so a late handler never misses it.
    public var expirationHandler: (@Sendable () -> Void)? {
        get { guarded.withLock { $0.expirationHandler } }
        set {
            let callNow = guarded.withLock { state -> Bool in
                state.expirationHandler = newValue
                return state.expired && !state.completed
            }
            if callNow { newValue?() }
        }
    }

    /// Tells the scheduler the work is done. Only the first call counts.
    public func setTaskCompleted(success: Bool) {
        if markCompleted() { completion(success, nil) }
    }

    /// Completes a push's task with the push handler's answer. Only the first completion counts.
    func setTaskCompleted(answering answer: FetchResult) {
        if markCompleted() { completion(answer != .failed, answer) }
    }

    /// Whether this is the first completion.
    private func markCompleted() -> Bool {
        guarded.withLock { state -> Bool in
            defer { state.completed = true }
            return !state.completed
        }
    }

    /// Whether the budget ran out (the expiration has been delivered).
    var isExpired: Bool { guarded.withLock { $0.expired } }

    /// Delivers the expiration: runs the handler once.
    func deliverExpiration() {
        let handler = guarded.withLock { state -> (@Sendable () -> Void)? in
            guard !state.expired else { return nil }
            state.expired = true
            return state.completed ? nil : state.expirationHandler
        }
        handler?()
    }

    public var description: String { "<\(type(of: self)): \(identifier)>" }

    /// The subclass for a task of `kind`.
    static func make(identifier: String, kind: TaskKind,
                     completion: @escaping @Sendable (_ success: Bool, _ answer: FetchResult?) -> Void) -> BGTask {
        switch kind {
        case .processing: return BGProcessingTask(identifier: identifier, kind: kind, completion: completion)
        case .appRefresh, .finishing: return BGAppRefreshTask(identifier: identifier, kind: kind, completion: completion)
        case .urlSession, .remoteNotification: return BGTask(identifier: identifier, kind: kind, completion: completion)
        }
    }
}

/// A launched app refresh request: about 30 seconds to refresh content.
public final class BGAppRefreshTask: BGTask, @unchecked Sendable {}

/// A launched processing request: minutes of runtime for maintenance.
public final class BGProcessingTask: BGTask, @unchecked Sendable {}
