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
    /// Questions taken up, and the answers still being given (each removes itself when sent).
    private let state = Mutex<(asked: Set<Asked>, running: [Asked: Task<Void, Never>])>(([], [:]))
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
        let answering = Task { [self] in
            defer { _ = state.withLock { $0.running.removeValue(forKey: key) } }
            let disposition = await delegate.urlSession(session, task: task, willBeginDelayedRequest: request)
            let answer = Self.answer(disposition, record: record, logger: logger)
            let outcome = await offThePool { SchedulerConnection(context: context).tell(.transferAnswer(answer)) }
            if let refusal = outcome?.error {
                logger.error("the answer about transfer \(record.identifier) was refused: \(refusal.message)")
            }
        }
        state.withLock { $0.running[key] = answering }
    }

    /// Waits until every question asked so far is answered.
    func waitForAnswers() async {
        while true {
            let pending = state.withLock { $0.running }
            guard !pending.isEmpty else { return }
            for answering in pending.values { await answering.value }
            // Also those that ended before they were filed (their own removal came first).
            state.withLock { shared in for key in pending.keys { shared.running[key] = nil } }
        }
    }

    /// The command for `disposition`. A new request the scheduler would refuse (not http(s), a
    /// header against the rules) becomes a cancel: the request the delegate turned down must not
    /// go out when the answer time ends.
    private static func answer(_ disposition: BGURLSession.DelayedRequestDisposition, record: TransferRecord,
                               logger: Logger) -> DelayedRequestAnswer {
        switch disposition {
        case .continueLoading:
            return DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .continue)
        case .cancel:
            return DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .cancel)
        case .useNewRequest(let request):
            let url = request.url?.absoluteString ?? ""
            let headers = BGURLSession.headers(of: request) ?? []
            let scheme = request.url?.scheme?.lowercased()
            let problem = (scheme == "http" || scheme == "https") && request.url?.host?.isEmpty == false
                ? TransferHeaderRules.problem(headers: headers) : "'\(url)' is not an http or https URL"
            if let problem {
                logger.error("the new request for transfer \(record.identifier) cannot be used (\(problem)); it is cancelled rather than begun as made")
                return DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .cancel)
            }
            return DelayedRequestAnswer(app: record.app, identifier: record.identifier, disposition: .new, url: url, headers: headers)
        }
    }
}
