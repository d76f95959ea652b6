import FoundationEssentials
import TaskState
import TransferCore

/// `urlSession(_:task:willBeginDelayedRequest:completionHandler:)`, the 2017 talk's promise: a
/// transfer with an `earliestBeginDate` whose app wants to be asked does not begin when its date
/// comes; the app is asked first (through its session in a running process, or by a launch with
/// reason `urlSession`), and may let it begin as made, change its URL and headers, or cancel it,
/// so a request made hours before does not go out stale. No answer within
/// `delayedRequestAnswerSeconds` means begin as made.
extension SchedulerState {
    /// The app was asked and has not answered.
    static func isAwaitingAnswer(_ record: borrowing TransferRecord) -> Bool {
        record.delayedRequestAskedAt != nil && record.delayedRequestOutcome == nil
    }

    /// The app is to be asked before the transfer's first attempt.
    static func needsQuestion(_ record: borrowing TransferRecord) -> Bool {
        record.asksBeforeDelayedBegin == true && record.earliestBeginDate != nil
            && record.delayedRequestAskedAt == nil && record.delayedRequestOutcome == nil
    }

    /// Before attempts start in a turn: asks about waiting transfers that could otherwise begin,
    /// and gives up on questions whose time has passed (they then begin as made).
    mutating func askDelayedRequests(at now: Date, busy: Set<TaskKey>) {
        // Only transfers with a question (``TransferSchedule/questioned``), in a fixed order for the events.
        let questioned = transferSchedule.questioned.subtracting(busy)
        for var record in questioned.sorted().compactMap({ transfers[$0] }) {
            if Self.isAwaitingAnswer(record), let answerBy = record.delayedRequestAnswerBy, answerBy <= now {
                record.delayedRequestOutcome = .timedOut
                record.updatedAt = now
                setTransfer(record)
                self.record(Event(time: now, type: .transferAnswerTimedOut, app: record.app, identifier: record.identifier,
                                  message: "\(record.app): no answer about transfer \(record.identifier) within \(Self.seconds(settings.delayedRequestAnswerSeconds)); it begins as made"))
            } else if Self.needsQuestion(record), transferBlockers(for: record, at: now).isEmpty {
                record.delayedRequestAskedAt = now
                record.delayedRequestAnswerBy = now.addingTimeInterval(settings.delayedRequestAnswerSeconds)
                record.updatedAt = now
                setTransfer(record)
                let how = app(record.app).attachedProcess != nil ? "its running process" : "the app"
                self.record(Event(time: now, type: .transferAsked, app: record.app, identifier: record.identifier,
                                  message: "\(record.app): asked \(how) whether transfer \(record.identifier) begins, changes or is cancelled (answer within \(Self.seconds(settings.delayedRequestAnswerSeconds)))"))
            }
        }
    }

    /// Sessions whose app must be launched to answer a question: asked, unanswered, not launched
    /// for yet, and the session sends launch events.
    func sessionsAwaitingAnswers() -> [Identifier: Set<String>] {
        var sessions: [Identifier: Set<String>] = [:]
        for key in transferSchedule.questioned {
            guard let record = transfers[key], record.state == .waiting, Self.isAwaitingAnswer(record), record.delayedRequestLaunchedAt == nil,
                  record.sessionSendsLaunchEvents == true, let session = record.session else { continue }
            sessions[record.app, default: []].insert(session)
        }
        return sessions
    }

    /// The app was launched for `sessions`: the questions in them were carried by it.
    mutating func noteQuestionLaunch(app appID: Identifier, sessions: Set<String>, now: Date) {
        for var record in transfers.values where record.app == appID && Self.isAwaitingAnswer(record)
            && record.delayedRequestLaunchedAt == nil && record.session.map(sessions.contains) == true {
            record.delayedRequestLaunchedAt = now
            setTransfer(record)
        }
    }

    /// Applies the app's answer (`transferAnswer`).
    mutating func answerDelayedRequest(_ answer: DelayedRequestAnswer, command: String?,
                                       now: Date) -> Result<(String, TransferAction?), SchedulerError> {
        let key = TaskKey(app: answer.app, identifier: answer.identifier)
        guard var record = transfers[key], record.state.isActive else {
            return .failure(.noSuchTask("no active transfer with identifier \(answer.identifier) for \(answer.app)"))
        }
        guard Self.isAwaitingAnswer(record) else {
            let why = switch record.delayedRequestOutcome {
            case .timedOut?: "no answer came in time and it began as made"
            case .some: "it was answered already"
            case nil: "it was not asked (only a transfer with an earliestBeginDate whose app asks is, when its date has come)"
            }
            return .failure(.invalidCommand("transfer \(answer.identifier) of \(answer.app) is not waiting for an answer: \(why)"))
        }
        let said: String
        switch answer.disposition {
        case .continue:
            record.delayedRequestOutcome = .continued
            said = "begins as made"
        case .cancel:
            record.delayedRequestOutcome = .cancelled
            setTransfer(record)
            recordAnswer(record, answer, "cancelled it", command: command, now: now)
            return cancelTransfer(app: answer.app, identifier: answer.identifier, reason: "cancelled by the app before its delayed begin",
                                  command: command, now: now)
        case .new:
            var dropped: [String] = []
            if let problem = changeRequest(of: &record, to: answer, dropped: &dropped) { return .failure(.invalidCommand(problem)) }
            record.delayedRequestOutcome = .changed
            let names = answer.headers.map { $0.isEmpty ? "no headers" : "headers " + $0.map(\.name).joined(separator: ", ") }
            let droppedText = dropped.isEmpty ? nil : "secret headers \(dropped.joined(separator: ", ")) dropped: another origin"
            said = "begins with a changed request (" + [answer.url.map { "URL \(URLText.hidingCredentials($0))" }, names, droppedText].compactMap { $0 }.joined(separator: ", ") + ")"
        }
        record.updatedAt = now
        setTransfer(record)
        recordAnswer(record, answer, said, command: command, now: now)
        return .success(("transfer \(answer.identifier) \(said)", nil))
    }

    /// `new`: the request takes the answer's URL and header fields, checked as at creation. Kept
    /// headers whose secrets were given for another origin are `dropped` (their names).
    private func changeRequest(of record: inout TransferRecord, to answer: DelayedRequestAnswer, dropped: inout [String]) -> String? {
        guard answer.url != nil || answer.headers != nil else { return "'new' needs a URL, header fields, or both" }
        if let url = answer.url, let problem = Self.httpURLProblem(url) { return problem }
        // Checked before merging: the merge must not cost more than the rule allows.
        if let names = answer.secretHeaderNames, let problem = TransferHeaderRules.problem(secretNames: names) { return problem }
        var secretNames = record.secretHeaderNames ?? []
        var known = Set(secretNames.map { $0.lowercased() })
        for name in answer.secretHeaderNames ?? [] where known.insert(name.lowercased()).inserted {
            secretNames.append(name)
        }
        var headers = answer.headers ?? record.headers
        // RFC 9110 §15.4: credentials given for one origin are not sent to another; headers the
        // answer names itself are the app's word for the new URL.
        if answer.headers == nil, let url = answer.url, !RequestOrigin.mayCarrySecrets(to: url, givenFor: record.url) {
            dropped = (headers ?? []).filter { TransferHeaderRules.isSecret($0.name, secretNames: secretNames) }.map(\.name)
            headers = headers?.filter { !TransferHeaderRules.isSecret($0.name, secretNames: secretNames) }
        }
        if let problem = TransferHeaderRules.problem(method: record.method, headers: headers,
                                                     secretNames: secretNames, direction: record.direction) {
            return problem
        }
        if let url = answer.url { record.url = url }
        record.headers = headers?.isEmpty == false ? headers : nil
        record.secretHeaderNames = secretNames.isEmpty ? nil : secretNames
        // Another request may name another entity: nothing held is resumed against it.
        record.etag = nil
        record.lastModified = nil
        return nil
    }

    private mutating func recordAnswer(_ record: TransferRecord, _ answer: DelayedRequestAnswer, _ said: String,
                                       command: String?, now: Date) {
        self.record(Event(time: now, type: .transferAnswered, app: record.app, identifier: record.identifier, command: command,
                          reason: answer.disposition.rawValue,
                          message: "\(record.app): the app answered about transfer \(record.identifier): \(said)"))
    }

    /// Why `text` is not an http or https URL with a host, or `nil`.
    static func httpURLProblem(_ text: String) -> String? {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
              url.host?.isEmpty == false else {
            return "'\(text)' is not an http or https URL"
        }
        return nil
    }
}
