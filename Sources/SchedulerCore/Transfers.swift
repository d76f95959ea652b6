import FoundationEssentials
import TaskState

/// Something the runtime must do to a transfer because of a policy decision.
public enum TransferAction: Sendable, Equatable {
    /// Start an attempt (the record says what to move, from where, to where).
    case start(TransferRecord)
    /// Stop the attempt, keeping partial data for a later resume.
    case pause(TaskKey)
    /// Stop the attempt and remove partial data.
    case cancel(TaskKey)
    /// A download completed after its transfer was cancelled: remove the file no record names.
    case discardDownload(TransferRecord)
}

/// How an attempt ended, as the runtime reports it.
public enum TransferAttemptEnd: Sendable, Equatable {
    case completed(statusCode: Int)
    /// `retryAfter` is the server's `Retry-After` in seconds; `madeProgress` says whether the
    /// attempt moved any bytes before it failed (the backoff then starts over).
    case failed(message: String, transient: Bool, retryAfter: Double? = nil, madeProgress: Bool = false)
    case paused
    case cancelled
}

extension SchedulerState {
    // MARK: - Commands

    mutating func createTransfer(_ request: TransferRequest, issuerPID: Int32?, launchToken: LaunchToken? = nil,
                                 command: String?, now: Date) -> Result<String, SchedulerError> {
        guard catalog.manifests[request.app] != nil else {
            return .failure(.unknownApp("app \(request.app) has no usable manifest"))
        }
        guard app(request.app).enabled else {
            return .failure(.unavailable("background work is switched off for \(request.app)"))
        }
        if let session = request.session, !Identifier.isValid(session) {
            return .failure(.invalidCommand("session identifier '\(session)' is not a valid identifier (letters, digits, '.', '-', '_')"))
        }
        if let problem = Self.httpURLProblem(request.url) { return .failure(.invalidCommand(problem)) }
        switch request.direction {
        case .download:
            guard let name = request.destination, Self.isPlainFileName(name) else {
                return .failure(.invalidCommand(
                    "a download needs a destination: a file name inside the app's downloads folder (no '/', not '.' or '..'), not '\(request.destination ?? "")'"))
            }
        case .upload:
            guard let source = request.sourceFile, source.hasPrefix("/") else {
                return .failure(.invalidCommand("an upload needs the absolute path of the file to send"))
            }
            // The check runs on the bytes that arrive; an upload's arrive at the server.
            guard request.sha256 == nil else {
                return .failure(.invalidCommand("sha256 is checked on downloads only, not on an upload"))
            }
        }
        // Checked here too, not only by bgctl and the library: any program may write the inbox.
        var sha256: String?
        if let text = request.sha256 {
            do {
                sha256 = try SHA256Hex(validating: text).rawValue
            } catch {
                return .failure(.invalidCommand("bad sha256: \(error.description)"))
            }
        }
        if let problem = TransferHeaderRules.problem(method: request.method, headers: request.headers,
                                                     secretNames: request.secretHeaderNames, direction: request.direction) {
            return .failure(.invalidCommand(problem))
        }
        if let existing = transfers[request.key], existing.state.isActive {
            return .failure(.alreadyRunning("transfer \(request.identifier) of \(request.app) is already \(existing.state.rawValue)"))
        }
        // A transfer handed over while the app runs in the background (for a task the scheduler
        // gave it) is discretionary, as on Apple's systems.
        let inBackground = issuerPID.map { pid in tasks.values.contains { $0.pid == pid && $0.app == request.app } } ?? false
        var record = TransferRecord(
            app: request.app, identifier: request.identifier, session: request.session, direction: request.direction,
            url: request.url, state: .waiting, bytesExpected: request.direction == .download
                ? request.countOfBytesClientExpectsToReceive : request.countOfBytesClientExpectsToSend,
            earliestBeginDate: request.earliestBeginDate, isDiscretionary: request.isDiscretionary || inBackground,
            createdAt: now, updatedAt: now, destination: request.destination, sourceFile: request.sourceFile,
            countOfBytesClientExpectsToReceive: request.countOfBytesClientExpectsToReceive,
            countOfBytesClientExpectsToSend: request.countOfBytesClientExpectsToSend,
            timeoutIntervalForRequest: request.timeoutIntervalForRequest,
            timeoutIntervalForResource: request.timeoutIntervalForResource,
            sessionSendsLaunchEvents: request.sessionSendsLaunchEvents, sha256: sha256, method: request.method,
            headers: request.headers?.isEmpty == false ? request.headers : nil,
            secretHeaderNames: request.secretHeaderNames?.isEmpty == false ? request.secretHeaderNames : nil)
        record.allowsExpensiveNetworkAccess = request.allowsExpensiveNetworkAccess
        // Only a delayed transfer is asked about (`willBeginDelayedRequest`).
        if request.asksBeforeDelayedBegin && request.earliestBeginDate != nil { record.asksBeforeDelayedBegin = true }
        // A verified launch token of this app is a process the scheduler launched, too.
        record.relaunchDelayUntil = relaunchDelayEnd(app: request.app, inBackground: inBackground || launchToken?.app == request.app,
                                                     now: now)
        setTransfer(record)
        let discretionary = record.isDiscretionary ? ", discretionary" : ""
        let delayed = record.relaunchDelayUntil.map { ", relaunch delay \(Self.seconds($0.timeIntervalSince(now)))" } ?? ""
        let message = "\(request.direction.rawValue) \(request.identifier) of \(URLText.hidingCredentials(request.url)) created\(discretionary)\(delayed)"
        self.record(Event(time: now, type: .transferCreated, app: request.app, identifier: request.identifier,
                          command: command, reason: request.direction.rawValue, message: "\(request.app): \(message)"))
        return .success(message)
    }

    mutating func pauseTransfer(app appID: Identifier, identifier: Identifier, command: String?,
                                now: Date) -> Result<(String, TransferAction?), SchedulerError> {
        let key = TaskKey(app: appID, identifier: identifier)
        guard var record = transfers[key], record.state.isActive else {
            return .failure(.noSuchTask("no active transfer with identifier \(identifier) for \(appID)"))
        }
        guard record.state != .paused else { return .success(("\(identifier) was already paused", nil)) }
        let wasRunning = record.state == .running
        record.state = .paused
        record.bytesPerSecond = nil
        record.updatedAt = now
        setTransfer(record)
        if wasRunning {
            pausesAwaitingEnd[key] = command
        } else {
            recordPaused(record, command: command, now: now)
        }
        return .success(("paused \(identifier)", wasRunning ? .pause(key) : nil))
    }

    mutating func resumeTransfer(app appID: Identifier, identifier: Identifier, command: String?,
                                 now: Date) -> Result<String, SchedulerError> {
        let key = TaskKey(app: appID, identifier: identifier)
        guard var record = transfers[key], record.state.isActive else {
            return .failure(.noSuchTask("no active transfer with identifier \(identifier) for \(appID)"))
        }
        guard record.state == .paused else { return .success("\(identifier) is not paused (\(record.state.rawValue))") }
        record.state = .waiting
        record.retryAt = nil
        record.updatedAt = now
        setTransfer(record)
        self.record(Event(time: now, type: .transferResumed, app: appID, identifier: identifier, command: command,
                          message: "\(appID): transfer \(identifier) resumed from \(record.bytesTransferred) bytes"))
        return .success("resumed \(identifier)")
    }

    mutating func cancelTransfer(app appID: Identifier, identifier: Identifier, reason: String, command: String?,
                                 now: Date) -> Result<(String, TransferAction?), SchedulerError> {
        let key = TaskKey(app: appID, identifier: identifier)
        guard var record = transfers[key], record.state.isActive else {
            return .failure(.noSuchTask("no active transfer with identifier \(identifier) for \(appID)"))
        }
        record.state = .cancelled
        record.lastError = reason
        record.bytesPerSecond = nil
        record.updatedAt = now
        record.finishedAt = now
        setTransfer(record)
        self.record(Event(time: now, type: .transferCancelled, app: appID, identifier: identifier, command: command,
                          reason: reason, message: "\(appID): transfer \(identifier) cancelled (\(reason))"))
        return .success(("cancelled \(identifier)", .cancel(key)))
    }

    /// Cancels every active transfer of an app that was switched off.
    mutating func cancelTransfers(of appID: Identifier, reason: String, now: Date) -> [TransferAction] {
        transfers.values.filter { $0.app == appID && $0.state.isActive }.sorted { $0.key < $1.key }.compactMap { record in
            (try? cancelTransfer(app: appID, identifier: record.identifier, reason: reason, command: nil, now: now).get())?.1
        }
    }

    // MARK: - Scheduling

    /// Why a waiting transfer does not start now; empty means it may start.
    public func transferBlockers(for record: borrowing TransferRecord, at now: Date) -> [TransferBlocker] {
        var result: [TransferBlocker] = []
        if let earliest = record.earliestBeginDate, earliest > now { result.append(.earliestBeginDate) }
        if let retryAt = record.retryAt, retryAt > now { result.append(.retryBackoff) }
        if let until = record.relaunchDelayUntil, until > now { result.append(.relaunchDelay) }
        if Self.isAwaitingAnswer(record), let answerBy = record.delayedRequestAnswerBy, answerBy > now { result.append(.awaitingAnswer) }
        let effective = conditions.effective
        if !effective.network { result.append(.network) }
        if record.isDiscretionary && !effective.externalPower { result.append(.externalPower) }
        if effective.expensive && !record.mayUseExpensiveNetwork { result.append(.expensiveNetwork) }
        if !isEnabled(record.app) { result.append(.appDisabled) }
        return result
    }

    /// The waiting transfers to start at `now`, within the concurrency limit: smaller expected
    /// sizes first, then the oldest. They are marked running; the runtime starts their attempts.
    ///
    /// `busy` are the transfers whose previous attempt has not reported its end yet (paused or
    /// cancelled a moment ago): they wait for that report, so one transfer never has two attempts.
    public mutating func dueTransfers(at now: Date, busy: Set<TaskKey> = []) -> [TransferAction] {
        var actions: [TransferAction] = []
        for record in overdueTransfers(at: now).sorted().compactMap({ transfers[$0] }) {
            actions += failTransfer(record, message: "gave up after its resource timeout of \(Self.seconds(record.timeoutIntervalForResource ?? TransferRecord.defaultTimeoutIntervalForResource))", now: now)
        }
        let running = transferSchedule.running.count
        let free = max(0, settings.maximumConcurrentTransfers - running)
        guard free > 0 else { return actions }
        let ready = startableTransfers(at: now, busy: busy).compactMap { transfers[$0] }
            .sorted { ($0.bytesExpected ?? .max, $0.createdAt, $0.key) < ($1.bytesExpected ?? .max, $1.createdAt, $1.key) }
        for var record in ready.prefix(free) {
            record.state = .running
            record.retryAt = nil
            record.updatedAt = now
            // An upload is sent whole each attempt.
            if record.direction == .upload { record.bytesTransferred = 0 }
            // Its `transferStarted` event waits for the request the attempt sends (transferRequested).
            setTransfer(record)
            actions.append(.start(record))
        }
        return actions
    }

    /// Active transfers past their resource deadline at `now`.
    func overdueTransfers(at now: Date) -> [TaskKey] {
        var keys: [TaskKey] = []
        transferSchedule.active.forEach { entry in
            guard entry.date <= now else { return false }
            keys.append(entry.key)
            return true
        }
        return keys
    }

    /// The waiting transfers nothing holds at `now`: in the condition groups the conditions let
    /// run, those no time holds any more (``TransferSchedule``).
    func startableTransfers(at now: Date, busy: Set<TaskKey>) -> [TaskKey] {
        var keys: [TaskKey] = []
        let effective = conditions.effective
        for (group, held) in transferSchedule.waiting where group.conditionBlockers(under: effective).isEmpty {
            held.forEach { entry in
                guard entry.date <= now else { return false }
                if !busy.contains(entry.key), let record = transfers[entry.key], transferBlockers(for: record, at: now).isEmpty {
                    keys.append(entry.key)
                }
                return true
            }
        }
        return keys
    }

    /// Progress of a running attempt; written without a sync.
    public mutating func transferProgressed(_ key: TaskKey, bytesTransferred: Int64, bytesExpected: Int64?,
                                            bytesPerSecond: Double?, etag: String?, lastModified: String?, now: Date) {
        guard var record = transfers[key], record.state == .running else { return }
        record.bytesTransferred = bytesTransferred
        if let bytesExpected { record.bytesExpected = bytesExpected }
        record.bytesPerSecond = bytesPerSecond
        let validatorChanged = (etag != nil && etag != record.etag) || (lastModified != nil && lastModified != record.lastModified)
        if let etag { record.etag = etag }
        if let lastModified { record.lastModified = lastModified }
        record.updatedAt = now
        setTransfer(record, durable: validatorChanged)
    }

    /// The longest `Retry-After` taken from a server: a day (the resource timeout bounds the rest).
    static let longestRetryAfter: Double = 86_400

    /// A running download dropped the bytes it held and starts again from byte 0, for `reason`.
    public mutating func transferRestarted(_ key: TaskKey, reason: String, now: Date) {
        guard var record = transfers[key], record.state == .running else { return }
        let dropped = record.bytesTransferred
        record.bytesTransferred = 0
        record.updatedAt = now
        setTransfer(record)
        let what = dropped > 0 ? "dropped \(dropped) bytes and " : ""
        self.record(Event(time: now, type: .transferRestarted, app: record.app, identifier: record.identifier,
                          reason: reason,
                          message: "\(record.app): transfer \(record.identifier) \(what)starts again from byte 0: \(reason)"))
    }

    /// An attempt ended: the record takes its outcome (a transient failure waits to retry).
    @discardableResult
    public mutating func transferEnded(_ key: TaskKey, _ end: TransferAttemptEnd, bytesTransferred: Int64,
                                       bytesExpected: Int64?, now: Date) -> [SchedulerEffect] {
        guard var record = transfers[key] else { return [] }
        if let command = pausesAwaitingEnd.removeValue(forKey: key) {
            recordPausedAttemptEnd(record, end, bytesTransferred: bytesTransferred, command: command, now: now)
        }
        record.bytesTransferred = bytesTransferred
        if let bytesExpected { record.bytesExpected = bytesExpected }
        record.bytesPerSecond = nil
        record.updatedAt = now
        switch end {
        case .completed(let status):
            // Paused a moment too late: the bytes are all there, so it is complete all the same.
            guard record.state == .running || record.state == .paused else {
                return record.state == .cancelled ? [.transfer(.discardDownload(record))] : []
            }
            record.state = .completed
            record.finishedAt = now
            record.lastError = nil
            setTransfer(record)
            let size = bytesExpected ?? bytesTransferred
            self.record(Event(time: now, type: .transferCompleted, app: record.app, identifier: record.identifier,
                              reason: "\(status)",
                              message: "\(record.app): transfer \(record.identifier) completed (\(size) bytes, HTTP \(status))"))
        case .failed(let message, let transient, let retryAfter, let madeProgress):
            guard record.state == .running else { return [] }
            if transient {
                record.retries += 1
                record.state = .waiting
                record.lastError = message
                // The backoff grows with failures in a row that moved nothing; an attempt that
                // made progress starts it over, so a flaky connection is not punished for hours.
                let step = madeProgress ? 1 : (record.failuresWithoutProgress ?? (record.retries - 1)) + 1
                record.failuresWithoutProgress = step
                // RFC 9110 §10.2.3: the server says how long to wait; its word replaces the backoff.
                let serverDelay = retryAfter.flatMap { $0.isFinite ? min(max($0, 0), Self.longestRetryAfter) : nil }
                let delay = serverDelay ?? settings.transferRetryDelay(retries: step)
                record.retryAt = now.addingTimeInterval(delay)
                setTransfer(record)
                let said = serverDelay == nil ? "" : " (the server's Retry-After)"
                self.record(Event(time: now, type: .transferRetrying, app: record.app, identifier: record.identifier,
                                  reason: "retry \(record.retries)",
                                  message: "\(record.app): transfer \(record.identifier) failed (\(message)); retry \(record.retries) in \(Self.seconds(delay))\(said)"))
            } else {
                _ = failTransfer(record, message: message, now: now)
            }
        case .paused:
            // Paused by a person (the record says so already) or by the scheduler stopping.
            if record.state == .running { record.state = .waiting }
            setTransfer(record)
        case .cancelled:
            setTransfer(record)
        }
        return []
    }

    private mutating func failTransfer(_ record: TransferRecord, message: String, now: Date) -> [TransferAction] {
        var record = record
        record.state = .failed
        record.lastError = message
        record.finishedAt = now
        record.bytesPerSecond = nil
        record.updatedAt = now
        setTransfer(record)
        self.record(Event(time: now, type: .transferFailed, app: record.app, identifier: record.identifier,
                          message: "\(record.app): transfer \(record.identifier) failed: \(message)"))
        // Stops a running attempt, and removes a waiting download's partial data either way.
        return [.cancel(record.key)]
    }

    /// After a scheduler start: attempts that were running died with the old scheduler; those
    /// transfers wait to start again (a download resumes from its partial data).
    public mutating func requeueInterruptedTransfers(now: Date) {
        for var record in transfers.values.sorted(by: { $0.key < $1.key }) where record.state == .running {
            record.state = .waiting
            record.bytesPerSecond = nil
            record.updatedAt = now
            setTransfer(record)
        }
    }

    /// Finished transfers past their retention are forgotten (their files removed).
    public mutating func forgetFinishedTransfers(at now: Date) {
        for key in transfersToForget(at: now) { removeTransfer(key) }
    }

    /// Finished transfers kept `finishedTransferRetentionSeconds` or longer at `now`.
    func transfersToForget(at now: Date) -> [TaskKey] {
        let retention = settings.finishedTransferRetentionSeconds
        var keys: [TaskKey] = []
        transferSchedule.finished.forEach { entry in
            guard now.timeIntervalSince(entry.date) >= retention else { return false }
            keys.append(entry.key)
            return true
        }
        return keys
    }

    /// The earliest time a waiting transfer becomes startable by time alone, or a finished one is
    /// to be forgotten.
    func nextTransferWake(after now: Date) -> Date? {
        var candidates: [Date] = []
        transferSchedule.active.forEach { candidates.append($0.date); return false }
        transferSchedule.finished.forEach { candidates.append($0.date.addingTimeInterval(settings.finishedTransferRetentionSeconds)); return false }
        // Waiting transfers held only by time: in each group the conditions let run, the first
        // whose time is still to come and that nothing else holds. (Their time is the date they
        // are ordered by.)
        let timed: Set<TransferBlocker> = [.earliestBeginDate, .retryBackoff, .relaunchDelay, .awaitingAnswer]
        let effective = conditions.effective
        for (group, held) in transferSchedule.waiting where group.conditionBlockers(under: effective).isEmpty {
            held.forEach(after: now) { entry in
                guard let record = transfers[entry.key] else { return true }
                let blockers = transferBlockers(for: record, at: now)
                guard !blockers.isEmpty, blockers.allSatisfy(timed.contains) else { return true }
                candidates.append(entry.date)
                return false
            }
        }
        return candidates.min()
    }

    /// A download's destination: one plain file name, so it cannot leave the app's folder.
    static func isPlainFileName(_ name: String) -> Bool {
        // As bytes (PathText): to String, "../\u{301}x" holds no "/" and is no "..".
        !name.isEmpty && !PathText.isDotOrDotDot(name) && !PathText.hasSeparator(name) && !PathText.hasNUL(name) && name.utf8.count <= 255
    }
}
