import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Logging
import Synchronization
import TaskState

/// A session delegate that is asked before a delayed transfer begins: Apple's
/// `urlSession(_:task:willBeginDelayedRequest:completionHandler:)`, in `async` form.
///
/// A transfer made on a session whose delegate conforms, with an `earliestBeginDate`, is not
/// begun when its date comes: the scheduler asks first, through this session in a running
/// process of the app, or by launching the app with reason `urlSession` (create the session in
/// the `.urlSession(identifier)` handler and await ``BGURLSession/deliverPendingEvents()``; the
/// question is answered before it returns). Answer `.continueLoading` to begin as made,
/// `.useNewRequest(_:)` to begin with another URL and header fields (the method stays), or
/// `.cancel`. No answer within the scheduler's `delayedRequestAnswerSeconds` (30 s) means begin
/// as made. Swift has no optional protocol methods: conform to this protocol, not only
/// ``BGURLSessionDelegate``, for the method to be called.
public protocol BGURLSessionDelayedRequestDelegate: BGURLSessionDelegate {
    /// `task`'s `earliestBeginDate` has come and it is about to begin with `request` (its URL,
    /// method and header fields, secrets included).
    func urlSession(_ session: BGURLSession, task: BGURLSessionTask,
                    willBeginDelayedRequest request: URLRequest) async -> BGURLSession.DelayedRequestDisposition
}

extension BGURLSession {
    /// What to do with a delayed transfer about to begin (`URLSession.DelayedRequestDisposition`).
    public enum DelayedRequestDisposition: Sendable {
        /// Begin with the request as it was made.
        case continueLoading
        /// Begin with this request's URL and header fields instead (its method is not used).
        case useNewRequest(URLRequest)
        /// Cancel the transfer: the delegate hears `didCompleteWithError` with `.cancelled`.
        case cancel
    }

    /// The request a transfer record would send, for the delegate.
    static func request(of record: TransferRecord) -> URLRequest {
        var request = URLRequest(url: URL(string: record.url) ?? URL(fileURLWithPath: "/"))
        request.httpMethod = record.method ?? (record.direction == .download ? "GET" : "PUT")
        for header in record.headers ?? [] { request.addValue(header.value, forHTTPHeaderField: header.name) }
        return request
    }
}

/// The questions a session is answering: each (transfer, time asked) once, and what
/// ``BGURLSession/deliverPendingEvents()`` waits for.
final class DelayedRequestQuestions: Sendable {
    private struct Asked: Hashable {
        var identifier: String
        var askedAt: Date
    }
    private let state = Mutex<(asked: Set<Asked>, running: [Task<Void, Never>])>(([], []))
    private let logger = Logger(label: "BackgroundTasks")

    /// Asks the delegate about `record` if the scheduler waits for an answer the session has not
    /// begun to give.
    func ask(_ session: BGURLSession, about record: TransferRecord, task: BGURLSessionTask, context: AppContext) {
        guard record.state == .waiting, let askedAt = record.delayedRequestAskedAt, record.delayedRequestOutcome == nil,
              let delegate = session.delegate as? any BGURLSessionDelayedRequestDelegate else { return }
        let key = Asked(identifier: record.identifier.rawValue, askedAt: askedAt)
        guard state.withLock({ $0.asked.insert(key).inserted }) else { return }
        let request = BGURLSession.request(of: record)
        let logger = logger
        let answering = Task {
            let disposition = await delegate.urlSession(session, task: task, willBeginDelayedRequest: request)
            let answer = Self.answer(disposition, record: record)
            let outcome = await offThePool { SchedulerConnection(context: context).tell(.transferAnswer(answer)) }
            guard let refusal = outcome?.error else { return }
            logger.error("the answer about transfer \(record.identifier) was refused: \(refusal.message)")
            // A new request the scheduler cannot use: the one the app just turned down must not go
            // out when the answer time ends, so the transfer is cancelled instead.
            guard answer.disposition == .new, !refusal.message.contains("is not waiting for an answer") else { return }
            let cancel = DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .cancel)
            _ = await offThePool { SchedulerConnection(context: context).tell(.transferAnswer(cancel)) }
            logger.error("transfer \(record.identifier) is cancelled rather than begun with the request the delegate replaced")
        }
        state.withLock { $0.running.append(answering) }
    }

    /// Waits until every question asked so far is answered.
    func waitForAnswers() async {
        while let next = state.withLock({ $0.running.isEmpty ? nil : $0.running.removeFirst() }) {
            await next.value
        }
    }

    private static func answer(_ disposition: BGURLSession.DelayedRequestDisposition, record: TransferRecord) -> DelayedRequestAnswer {
        switch disposition {
        case .continueLoading:
            return DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .continue)
        case .cancel:
            return DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .cancel)
        case .useNewRequest(let request):
            return DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .new,
                                        url: request.url?.absoluteString, headers: BGURLSession.headers(of: request) ?? [])
        }
    }
}
