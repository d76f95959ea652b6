import FoundationEssentials
import TaskState

/// What applying one command produced: the outcome to record, and what the runtime must carry
/// out, in order.
public struct CommandResult: Sendable, Equatable {
    public var outcome: CommandOutcome
    public var effects: [SchedulerEffect] = []

    /// The launch among ``effects`` (`simulateLaunch`).
    public var launch: LaunchPlan? {
        effects.lazy.compactMap { effect -> LaunchPlan? in
            if case .launch(let plan) = effect { return plan }
            return nil
        }.first
    }
}

extension SchedulerState {
    /// Applies one command at `now`. A refused command changes nothing but the event log.
    public mutating func apply(_ command: Command, now: Date) -> CommandResult {
        // Numbers first: any program may write the inbox, and a number out of its documented range
        // must be refused with its reason before it reaches a deadline, a timer or a conversion.
        if let problem = command.outOfBounds(now: now) {
            return refuse(command, .invalidCommand(problem.description), now: now)
        }
        var effects: [SchedulerEffect] = []
        let result: Result<(String, Identifier?), SchedulerError>
        switch command.action {
        case .submit(let request):
            result = submit(request, command: command.id, now: now).map { ($0, request.identifier) }
        case .cancel(let app, let identifier):
            result = .success((cancel(app: app, identifiers: [identifier], command: command.id, now: now), identifier))
        case .cancelAll(let app):
            let identifiers = requests(of: app).map(\.identifier)
            result = .success((cancel(app: app, identifiers: identifiers, command: command.id, now: now), nil))
        case .simulateLaunch(let identifier, let app):
            if let lifted = liftRelaunchDelay(identifier: identifier, app: app, command: command.id, now: now) {
                result = .success((lifted, identifier))
            } else {
                result = simulatedLaunch(identifier: identifier, app: app, now: now).map {
                    effects.append(.launch($0))
                    return ("launching \($0.app) for \(identifier)", identifier)
                }
            }
        case .simulateExpiration(let identifier, let app):
            result = simulateExpiration(identifier: identifier, app: app, now: now).map { key, message in
                effects += expireRunning(at: now, only: [key])
                return (message, identifier)
            }
        case .complete(let app, let identifier, let success):
            result = complete(app: app, identifier: identifier, success: success, command: command.id, now: now)
                .map { ($0, identifier) }
        case .beginFinishing(let app, let name, let pid):
            result = beginFinishing(app: app, name: name, pid: pid, command: command.id, now: now).map {
                effects.append(.superviseFinishing(TaskKey(app: app, identifier: $0), pid: pid))
                return ("finishing task \($0) started with \(SafeNumber.secondsText(settings.finishingBudgetSeconds.rounded(.down))) s", $0)
            }
        case .setAppEnabled(let app, let enabled):
            result = setEnabled(app: app, enabled: enabled, command: command.id, now: now).map { message, actions in
                effects += actions.map(SchedulerEffect.transfer)
                return (message, nil)
            }
        case .setConditions(let overrides):
            result = .success((overrideConditions(conditions.overrides.merging(overrides), command: command.id, now: now), nil))
        case .clearConditions:
            result = .success((overrideConditions(ConditionOverrides(), command: command.id, now: now), nil))
        case .attach(let app, let pid, let identifiers, let acceptsPushes, let acceptsVoIPPushes):
            result = attach(app: app, pid: pid, identifiers: identifiers, acceptsPushes: acceptsPushes,
                            acceptsVoIPPushes: acceptsVoIPPushes, command: command.id, now: now).map {
                effects.append(.superviseAttachment(app: app, pid: pid))
                return ($0, nil)
            }
        case .detach(let app, let pid):
            result = .success((detach(app: app, pid: pid, command: command.id, now: now), nil))
        case .transferCreate(let request):
            result = createTransfer(request, issuerPID: command.issuerPID, launchToken: command.launchToken, command: command.id, now: now)
                .map { ($0, request.identifier) }
        case .transferCancel(let app, let identifier):
            result = cancelTransfer(app: app, identifier: identifier, reason: "cancelled", command: command.id, now: now)
                .map { message, action in
                    if let action { effects.append(.transfer(action)) }
                    return (message, identifier)
                }
        case .transferPause(let app, let identifier):
            result = pauseTransfer(app: app, identifier: identifier, command: command.id, now: now)
                .map { message, action in
                    if let action { effects.append(.transfer(action)) }
                    return (message, identifier)
                }
        case .transferResume(let app, let identifier):
            result = resumeTransfer(app: app, identifier: identifier, command: command.id, now: now).map { ($0, identifier) }
        case .transferAcknowledge(let app, let identifier):
            result = acknowledgeTransfer(app: app, identifier: identifier).map { ($0, identifier) }
        case .transferAnswer(let answer):
            result = answerDelayedRequest(answer, command: command.id, now: now).map { message, action in
                if let action { effects.append(.transfer(action)) }
                return (message, answer.identifier)
            }
        case .push(let request):
            result = receivePush(request, command: command, now: now).map { message, held in
                if let held, let plan = pushDelivery(held, at: now) { effects.append(.launch(plan)) }
                return (message, held?.id)
            }
        case .appUsed(let app, let uses):
            result = recordUses(app: app, uses: uses, command: command.id, now: now).map { message in
                // A person's use (no launch token) lifts a VoIP block; a launch's own does not.
                if command.launchToken == nil {
                    noteUseForVoIP(app: app, uses: uses, now: now)
                    noteUseForRelaunchDelay(app: app)
                }
                return (message, nil)
            }
        case .reportCall(let report):
            result = reportCall(report, command: command.id, now: now).map { ($0, nil) }
        case .answerPush(let app, let identifier, let fetchResult):
            result = answerPush(app: app, identifier: identifier, result: fetchResult, command: command.id, now: now)
                .map { ($0, identifier) }
        }
        switch result {
        case .success(let (message, identifier)):
            return CommandResult(
                outcome: CommandOutcome(command: command.id, type: command.action.name, appliedAt: now,
                                        message: message, identifier: identifier),
                effects: effects)
        case .failure(let error):
            return refuse(command, error, now: now)
        }
    }

    /// Records the refusal of `command`: a `refused` event, and the outcome that carries the error.
    /// Public for refusals only the runtime can decide (``SchedulerError/notAppProcess(_:)``).
    public mutating func refuse(_ command: Command, _ error: SchedulerError, now: Date) -> CommandResult {
        record(Event(time: now, type: .refused, app: command.action.app, identifier: command.action.identifier,
                     command: command.id, reason: error.name, message: error.description))
        return CommandResult(
            outcome: CommandOutcome(command: command.id, type: command.action.name, appliedAt: now,
                                    error: error.refusal, identifier: command.action.identifier))
    }

    // MARK: - Submit and cancel

    mutating func submit(_ submitted: SubmitRequest, command: String?, now: Date) -> Result<String, SchedulerError> {
        let appID = submitted.app
        guard let manifest = catalog.manifests[appID] else {
            return .failure(.unknownApp("app \(appID) has no usable manifest"))
        }
        guard submitted.kind != .finishing else {
            return .failure(.invalidCommand("finishing tasks are begun, not submitted"))
        }
        if let refusal = manifest.refusal(toUse: submitted.identifier, as: submitted.kind) {
            return .failure(.notPermitted(refusal))
        }
        guard app(appID).enabled else {
            return .failure(.unavailable("background work is switched off for \(appID)"))
        }
        if submitted.kind == .appRefresh && conditions.effective.lowPower {
            return .failure(.unavailable("app refresh is unavailable in low power mode"))
        }
        let key = TaskKey(app: appID, identifier: submitted.identifier)
        let sameKind = requests(of: appID).filter { $0.kind == submitted.kind && $0.identifier != submitted.identifier }
        let limit = submitted.kind == .appRefresh ? settings.maximumPendingAppRefresh : settings.maximumPendingProcessing
        if sameKind.count >= limit {
            return .failure(.tooManyPendingTaskRequests(
                "\(appID) already has \(sameKind.count) pending \(submitted.kind.rawValue) request\(sameKind.count == 1 ? "" : "s") (limit \(limit))"))
        }
        let replacing = requests[key] != nil
        let isProcessing = submitted.kind == .processing
        let request = PendingRequest(
            app: appID, identifier: submitted.identifier, kind: submitted.kind,
            earliestBeginDate: submitted.earliestBeginDate,
            requiresNetworkConnectivity: isProcessing && submitted.requiresNetworkConnectivity,
            requiresExternalPower: isProcessing && submitted.requiresExternalPower,
            submittedAt: now, commandID: command, allowsExpensiveNetworkAccess: submitted.allowsExpensiveNetworkAccess)
        setRequest(request)
        if apps[appID] == nil { setApp(app(appID)) }
        let when = submitted.earliestBeginDate.map { " not before \(JSONFormat.string(from: $0))" } ?? ""
        let message = "\(replacing ? "replaced" : "submitted") \(submitted.kind.rawValue) request \(submitted.identifier)\(when)"
        record(Event(time: now, type: replacing ? .replaced : .submitted, app: appID, identifier: submitted.identifier,
                     kind: submitted.kind, command: command, message: "\(appID): \(message)"))
        return .success(message)
    }

    mutating func cancel(app appID: Identifier, identifiers: [Identifier], command: String?, now: Date) -> String {
        var cancelled: [Identifier] = []
        for identifier in identifiers.sorted() {
            let key = TaskKey(app: appID, identifier: identifier)
            guard let request = requests[key] else { continue }
            removeRequest(key)
            cancelled.append(identifier)
            record(Event(time: now, type: .cancelled, app: appID, identifier: identifier, kind: request.kind,
                         command: command, message: "\(appID): cancelled request \(identifier)"))
        }
        if cancelled.isEmpty { return "no pending request to cancel" }
        return "cancelled \(cancelled.map(\.rawValue).joined(separator: ", "))"
    }

    // MARK: - Completion and finishing tasks

    mutating func complete(app appID: Identifier, identifier: Identifier, success: Bool, fetchResult: FetchResult? = nil,
                           command: String?, now: Date) -> Result<String, SchedulerError> {
        let key = TaskKey(app: appID, identifier: identifier)
        guard let task = tasks[key] else {
            return .failure(.noSuchTask("no running task with identifier \(identifier) for \(appID)"))
        }
        removeTask(key)
        let inTime = task.state == .running
        if inTime, task.kind != .finishing {
            var record = app(appID)
            if record.throttleLevel != 0 || record.throttledUntil != nil {
                record.throttleLevel = 0
                record.throttledUntil = nil
                setApp(record)
            }
        }
        // A push's task answers how it went (`UIBackgroundFetchResult`); a plain completion counts
        // as new data or a failure.
        // A VoIP push's task has no fetch to answer for: it completes like any task.
        let answer = task.kind == .remoteNotification && task.push?.isVoIP != true ? fetchResult ?? (success ? .newData : .failed) : nil
        let how = answer.map { "answering \($0.rawValue)" } ?? (success ? "successfully" : "with failure")
        let late = inTime ? "" : " after its expiration"
        let elapsed = String(printf: "%.1f", now.timeIntervalSince(task.startedAt))
        record(Event(time: now, type: .completed, app: appID, identifier: identifier, kind: task.kind, pid: task.pid,
                     command: command, reason: answer?.rawValue ?? (success ? "success" : "failure"),
                     message: "\(appID): \(identifier) completed \(how)\(late) after \(elapsed) s",
                     cpuSeconds: resourceUsage(of: task)?.cpuSeconds, peakMemoryBytes: resourceUsage(of: task)?.peakMemoryBytes))
        if let answer { notePushAnswer(answer, app: appID, now: now) }
        return .success("completed \(identifier) \(how)\(late)")
    }

    mutating func beginFinishing(app appID: Identifier, name: String?, pid: Int32, command: String?,
                                 now: Date) -> Result<Identifier, SchedulerError> {
        guard let manifest = catalog.manifests[appID] else {
            return .failure(.unknownApp("app \(appID) has no usable manifest"))
        }
        guard pid > 0 else { return .failure(.invalidCommand("begin-finishing needs the pid of the app's process")) }
        var number = 1
        var identifier = try! Identifier(validating: "finishing-1")
        while tasks[TaskKey(app: appID, identifier: identifier)] != nil {
            number += 1
            identifier = try! Identifier(validating: "finishing-\(number)")
        }
        let task = LaunchedTask(
            app: appID, identifier: identifier, kind: .finishing, launchReason: "finishing", simulated: false,
            pid: pid, processGroup: nil, processStartTicks: nil, launchID: command ?? identifier.rawValue,
            startedAt: now, deadline: now.addingTimeInterval(settings.finishingBudgetSeconds),
            expirationSignal: manifest.expirationSignal, name: name)
        setTask(task)
        record(Event(time: now, type: .launched, app: appID, identifier: identifier, kind: .finishing, pid: pid,
                     command: command, reason: "finishing",
                     message: "\(appID): pid \(pid) began finishing task \(identifier)\(name.map { " (\($0))" } ?? "")"))
        return .success(identifier)
    }

    // MARK: - Apps and conditions

    /// Switches the app's background work on or off; switching it off cancels its transfers (the
    /// attempts to stop are returned).
    mutating func setEnabled(app appID: Identifier, enabled: Bool, command: String?,
                             now: Date) -> Result<(String, [TransferAction]), SchedulerError> {
        guard catalog.manifests[appID] != nil || apps[appID] != nil else {
            return .failure(.unknownApp("app \(appID) has no manifest"))
        }
        var record = app(appID)
        let changed = record.enabled != enabled
        record.enabled = enabled
        setApp(record)
        let cancelled = enabled ? [] : cancelTransfers(of: appID, reason: "app disabled", now: now)
        if !enabled { dropPushes(ofDisabled: appID, now: now) }
        if !changed { return .success(("\(appID) was already \(enabled ? "enabled" : "disabled")", cancelled)) }
        self.record(Event(time: now, type: enabled ? .appEnabled : .appDisabled, app: appID, command: command,
                          message: "\(appID): background work switched \(enabled ? "on" : "off")"))
        return .success(("\(appID) \(enabled ? "enabled" : "disabled")", cancelled))
    }

    mutating func overrideConditions(_ overrides: ConditionOverrides, command: String?, now: Date) -> String {
        var updated = conditions
        updated.overrides = overrides
        updated.effective = overrides.applied(to: updated.probed)
        let summary = ConditionsDescription.describe(updated)
        if updated != conditions {
            setConditions(updated)
            record(Event(time: now, type: .conditionsChanged, command: command, reason: "override",
                         message: "conditions: \(summary)"))
        }
        return "conditions: \(summary)"
    }

    /// Takes a fresh probe of the machine; records an event when the effective conditions change.
    public mutating func updateProbedConditions(_ probed: Conditions, batteryPercent: Int?, loadAverage: Double?, now: Date) {
        var updated = ConditionsRecord(probed: probed, overrides: conditions.overrides, batteryPercent: batteryPercent,
                                       loadAverage: loadAverage, probedAt: now)
        updated.sources = conditions.sources
        let changed = updated.effective != conditions.effective
        if !changed && updated.probed == conditions.probed && updated.batteryPercent == conditions.batteryPercent {
            // Only the load figure moved: not worth a write.
            updated = conditions
        }
        setConditions(updated)
        if changed {
            record(Event(time: now, type: .conditionsChanged, reason: "probe",
                         message: "conditions: \(ConditionsDescription.describe(updated))"))
        }
    }

    /// Takes a freshly read manifest catalog; reports new problems and newly loaded apps.
    public mutating func updateCatalog(_ new: ManifestCatalog, now: Date) {
        let oldProblems = Set(catalog.problems)
        for problem in new.problems where !oldProblems.contains(problem) {
            record(Event(time: now, type: .manifestError, reason: problem.file,
                         message: "manifest \(problem.file): \(problem.reason)"))
        }
        for (id, manifest) in new.manifests.sorted(by: { $0.key < $1.key }) where catalog.manifests[id] != manifest {
            record(Event(time: now, type: .manifestLoaded, app: id,
                         message: "\(id): manifest loaded (\(manifest.permittedIdentifiers.count) permitted identifiers)"))
            if apps[id] == nil { setApp(AppRecord(id: id)) }
        }
        catalog = new
    }
}

extension CommandAction {
    var app: Identifier? {
        switch self {
        case .submit(let request): return request.app
        case .transferCreate(let request): return request.app
        case .cancel(let app, _), .cancelAll(let app), .complete(let app, _, _), .beginFinishing(let app, _, _),
             .setAppEnabled(let app, _), .attach(let app, _, _, _, _), .detach(let app, _),
             .transferCancel(let app, _), .transferPause(let app, _), .transferResume(let app, _),
             .transferAcknowledge(let app, _), .answerPush(let app, _, _), .appUsed(let app, _):
            return app
        case .reportCall(let report): return report.app
        case .transferAnswer(let answer): return answer.app
        case .push(let request): return request.app
        case .simulateLaunch(_, let app), .simulateExpiration(_, let app): return app
        case .setConditions, .clearConditions: return nil
        }
    }

    var identifier: Identifier? {
        switch self {
        case .submit(let request): return request.identifier
        case .transferCreate(let request): return request.identifier
        case .transferAnswer(let answer): return answer.identifier
        case .cancel(_, let identifier), .complete(_, let identifier, _), .simulateLaunch(let identifier, _),
             .simulateExpiration(let identifier, _), .transferCancel(_, let identifier), .transferPause(_, let identifier),
             .transferResume(_, let identifier), .transferAcknowledge(_, let identifier), .answerPush(_, let identifier, _):
            return identifier
        default: return nil
        }
    }
}

/// One-line text for a conditions record, with simulated values marked.
public enum ConditionsDescription {
    public static func describe(_ record: ConditionsRecord) -> String {
        let effective = record.effective
        func mark(_ name: Conditions.Name) -> String { record.isSimulated(name) ? " (simulated)" : "" }
        return [
            "power=\(effective.externalPower ? "ac" : "battery")\(mark(.power))",
            "network=\(effective.network ? "up" : "down")\(mark(.network))",
            "idle=\(effective.idle ? "yes" : "no")\(mark(.idle))",
            "lowpower=\(effective.lowPower ? "on" : "off")\(mark(.lowpower))",
        ].joined(separator: " ") + expensive(record)
    }

    /// A metered network is named only when it is (or is simulated): most machines never are,
    /// and the four words before it stay as they were.
    private static func expensive(_ record: ConditionsRecord) -> String {
        guard record.effective.expensive || record.isSimulated(.expensive) else { return "" }
        return " expensive=\(record.effective.expensive ? "on" : "off")\(record.isSimulated(.expensive) ? " (simulated)" : "")"
    }
}
