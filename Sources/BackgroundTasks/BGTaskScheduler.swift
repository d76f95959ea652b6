import Dispatch
import Foundation
import Logging
import Synchronization
import TaskState

/// The app's side of the background task scheduler, shaped like Apple's `BGTaskScheduler`.
///
/// At start, register a launch handler for every task identifier the app uses, then call
/// ``finishLaunching()`` (or ``runUntilComplete()``). Submit requests at any time; the scheduler
/// (`bgtaskd`) launches the app, or hands the task to the app's running process, when the request
/// comes due.
///
/// Linux differs from Apple's systems in one visible way: there is no app delegate whose
/// `didFinishLaunching` ends registration, so the app says when launching is over.
public final class BGTaskScheduler: Sendable {
    /// The scheduler for this process.
    public static let shared = BGTaskScheduler()

    private struct Guarded {
        var handlers: [String: LaunchHandler] = [:]
        /// Identifiers registered for session events: not task identifiers the scheduler hands over.
        var sessionHandlers: Set<String> = []
        /// `BGApplication.registerForRemoteNotifications`: runs every push's task.
        var pushHandler: PushHandler?
        /// ``PushRegistry``: runs every VoIP push's task.
        var voipHandler: VoIPHandler?
        var launchFinished = false
        var context: Result<AppContext, Error>?
        var delivery: TaskDelivery?
    }

    private let guarded = Mutex<Guarded>(Guarded())
    let logger = Logger(label: "BackgroundTasks")
    private let environment: [String: String]

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    // MARK: - Registration

    /// Registers the handler that runs tasks with `identifier`. The handler must complete the task
    /// with `setTaskCompleted(success:)` and should set its `expirationHandler`.
    ///
    /// Returns `false` when the manifest does not permit the identifier, when the app has no
    /// usable manifest, or after launching has finished; the reason is logged. Registering one
    /// identifier twice is a programmer error and stops the process.
    ///
    /// - Parameter queue: where the handler runs; `nil` means a background queue.
    @discardableResult
    public func register(forTaskWithIdentifier identifier: String, using queue: DispatchQueue?,
                         launchHandler: @escaping @Sendable (BGTask) -> Void) -> Bool {
        register(identifier, kinds: [.appRefresh, .processing], handler: .callback(queue: queue, handler: launchHandler))
    }

    /// Registers an `async` handler, the SwiftUI `.backgroundTask(.appRefresh("id")) { ... }` way:
    /// the task completes when `action` returns, and when its budget runs out the `Task` running
    /// `action` is cancelled, so `withTaskCancellationHandler` and `Task.checkCancellation()` work.
    /// A task that was cancelled completes with `success: false`.
    ///
    /// Returns `false` for the same reasons as ``register(forTaskWithIdentifier:using:launchHandler:)``,
    /// and when the manifest lacks the background mode the kind needs.
    @discardableResult
    public func register(_ task: BackgroundTask, action: @escaping @Sendable () async -> Void) -> Bool {
        register(task.identifier, kinds: [task.taskKind], handler: .async(action: action))
    }

    private func register(_ identifier: String, kinds: [TaskKind], handler: LaunchHandler) -> Bool {
        let context: AppContext
        switch resolvedContext() {
        case .success(let found): context = found
        case .failure(let error):
            logger.error("cannot register \(identifier): \(error.message)")
            return false
        }
        let refusals = kinds.compactMap { context.permission(for: identifier, kind: $0) }
        if refusals.count == kinds.count, let refusal = refusals.first {
            logger.error("cannot register \(identifier): \(refusal.message)")
            return false
        }
        enum Outcome { case registered, duplicate, tooLate }
        let outcome = guarded.withLock { state -> Outcome in
            if state.launchFinished { return .tooLate }
            if state.handlers[identifier] != nil { return .duplicate }
            state.handlers[identifier] = handler
            if kinds == [.urlSession] { state.sessionHandlers.insert(identifier) }
            return .registered
        }
        switch outcome {
        case .registered:
            return true
        case .duplicate:
            fatalError("Launch handler for task with identifier \(identifier) has already been registered")
        case .tooLate:
            logger.error("cannot register \(identifier): launching has finished; register every launch handler before finishLaunching()")
            return false
        }
    }

    /// Registers the push handler (`BGApplication.registerForRemoteNotifications`), under the same
    /// rules as launch handlers: before launching finishes, and only with the manifest's
    /// `remote-notification` background mode.
    func registerPushHandler(_ handler: @escaping PushHandler) -> Bool {
        let context: AppContext
        switch resolvedContext() {
        case .success(let found): context = found
        case .failure(let error):
            logger.error("cannot register for remote notifications: \(error.message)")
            return false
        }
        guard context.manifest.backgroundModes.contains(.remoteNotification) else {
            logger.error("cannot register for remote notifications: \(context.app)'s manifest does not declare the 'remote-notification' background mode")
            return false
        }
        enum Outcome { case registered, duplicate, tooLate }
        let outcome = guarded.withLock { state -> Outcome in
            if state.launchFinished { return .tooLate }
            if state.pushHandler != nil { return .duplicate }
            state.pushHandler = handler
            return .registered
        }
        switch outcome {
        case .registered:
            return true
        case .duplicate:
            logger.error("cannot register for remote notifications: a push handler is already registered; the first one stays")
            return false
        case .tooLate:
            logger.error("cannot register for remote notifications: launching has finished; register the push handler before finishLaunching()")
            return false
        }
    }

    /// Registers the VoIP push handler of a ``PushRegistry``, under the rules of the push handler.
    @discardableResult
    func registerVoIPHandler(_ handler: @escaping VoIPHandler) -> Bool {
        let context: AppContext
        switch resolvedContext() {
        case .success(let found): context = found
        case .failure(let error):
            logger.error("cannot register for VoIP pushes: \(error.message)")
            return false
        }
        guard context.manifest.backgroundModes.contains(.remoteNotification) else {
            logger.error("cannot register for VoIP pushes: \(context.app)'s manifest does not declare the 'remote-notification' background mode")
            return false
        }
        let registered = guarded.withLock { state -> Bool in
            guard !state.launchFinished else { return false }
            state.voipHandler = state.voipHandler ?? handler
            return true
        }
        if !registered {
            logger.error("cannot register for VoIP pushes: launching has finished; set desiredPushTypes before finishLaunching()")
        }
        return registered
    }

    // MARK: - Launching

    /// Ends registration and starts taking tasks: the ones the scheduler launched this process
    /// for, and, since the scheduler is told this process is running, every later request of
    /// the app that comes due while it runs (instead of a second process being started), and,
    /// with a push handler registered, every background push for the app, and with a
    /// `PushRegistry` registered for VoIP pushes, every VoIP push.
    public func finishLaunching() {
        startDelivery(attaching: true)
    }

    /// Finishes launching, runs every task handed to this process, and returns once all of them
    /// have completed and the scheduler has been told that this process takes no more. A process
    /// the scheduler launched calls this, then exits.
    public func runUntilComplete() async {
        guard let delivery = await offThePool({ self.startDelivery(attaching: true) }) else { return }
        while true {
            await delivery.waitUntilIdle()
            let isIdle = await offThePool {
                SchedulerConnection(context: delivery.context).tell(.detach(app: delivery.context.app, pid: getpid()))
                // A task handed over just before the detachment was applied is run too.
                delivery.scan()
                return delivery.isIdleNow
            }
            if isIdle { return }
        }
    }

    /// Starts the delivery thread once; attaches this process when asked and not yet done.
    @discardableResult
    func startDelivery(attaching: Bool) -> TaskDelivery? {
        let context: AppContext
        switch resolvedContext() {
        case .success(let found): context = found
        case .failure(let error):
            logger.error("background tasks are unavailable: \(error.message)")
            return nil
        }
        let expected = launchTasks(for: context)
        struct Started { var delivery: TaskDelivery?; var attach = false; var identifiers: [String] = []; var acceptsPushes = false
                       var acceptsVoIPPushes = false }
        let result = guarded.withLock { state -> Started in
            let attach = attaching && !state.launchFinished
            if attaching { state.launchFinished = true }
            let taskIdentifiers = Array(Set(state.handlers.keys).subtracting(state.sessionHandlers))
            // Each type of push goes only to a process with a handler for it.
            let acceptsPushes = state.pushHandler != nil
            let acceptsVoIPPushes = state.voipHandler != nil
            if let delivery = state.delivery {
                return Started(delivery: delivery, attach: attach, identifiers: taskIdentifiers, acceptsPushes: acceptsPushes,
                               acceptsVoIPPushes: acceptsVoIPPushes)
            }
            // A push's task is named by the push's id, so its handler is found by kind and type.
            let handlers: @Sendable (String, TaskKind, PushType) -> LaunchHandler? = { [weak self] id, kind, type in
                self?.guarded.withLock { state in
                    guard kind == .remoteNotification else { return state.handlers[id] }
                    return type == .voip ? state.voipHandler.map { .voip(handler: $0) } : state.pushHandler.map { .push(handler: $0) }
                }
            }
            do throws(Error) {
                let delivery = try TaskDelivery(context: context, handlers: handlers, logger: logger, expected: expected)
                try delivery.start()
                state.delivery = delivery
                return Started(delivery: delivery, attach: attach, identifiers: taskIdentifiers, acceptsPushes: acceptsPushes,
                               acceptsVoIPPushes: acceptsVoIPPushes)
            } catch {
                logger.error("background tasks are unavailable: \(error.message)")
                return Started()
            }
        }
        guard let delivery = result.delivery else { return nil }
        if attaching { delivery.allowStarts() }
        if result.attach {
            let identifiers = result.identifiers.sorted().compactMap { try? Identifier(validating: $0) }
            let connection = SchedulerConnection(context: context)
            if connection.schedulerIsRunning {
                do throws(Error) {
                    _ = try connection.request(.attach(app: context.app, pid: getpid(), identifiers: identifiers,
                                                       acceptsPushes: result.acceptsPushes,
                                                       acceptsVoIPPushes: result.acceptsVoIPPushes))
                } catch {
                    logger.warning("the scheduler will not hand tasks to this process: \(error.message)")
                }
            }
            // A process a person started (the scheduler's launches carry BGTASK_LAUNCH_ID) is a
            // use of the app: usage prediction learns when to refresh it from these. Written
            // durably, not awaited: launching must not wait on the scheduler.
            if environment["BGTASK_LAUNCH_ID"] == nil, connection.enqueue(.appUsed(app: context.app, uses: [Date()])) == nil {
                logger.warning("cannot record this use of \(context.app) in \(context.paths.inbox)")
            }
        }
        return delivery
    }

    /// The tasks the scheduler says it launched this process for (`BGTASK_TASK_IDS`).
    private func launchTasks(for context: AppContext) -> Set<String> {
        guard environment["BGTASK_APP_ID"] == context.app.rawValue, environment["BGTASK_LAUNCH_ID"] != nil else { return [] }
        return Set((environment["BGTASK_TASK_IDS"] ?? "").split(separator: " ").map(String.init))
    }

    func resolvedContext() -> Result<AppContext, Error> {
        if let known = guarded.withLock({ $0.context }) { return known }
        let resolved = AppContext.resolve(environment: environment)
        guarded.withLock { $0.context = resolved }
        return resolved
    }

    // MARK: - Requests

    /// Submits a request, replacing a pending one with the same identifier.
    ///
    /// Throws ``Error`` with the scheduler's message: `notPermitted` for an identifier the manifest
    /// does not permit, `tooManyPendingTaskRequests` over the limit, `unavailable` when background
    /// work is switched off, in low power mode (app refresh), or when no scheduler is running.
    /// Never waits more than a few seconds.
    ///
    /// An `earliestBeginDate` more than a week ahead is accepted with a logged warning (Apple's
    /// advice: submit again closer to the time). A processing request submitted by a process a
    /// person started (not one the scheduler launched) also records a use of the app, so the
    /// scheduler's `processingRecentUseDays` rule counts apps that ask from the foreground as used.
    public func submit(_ taskRequest: BGTaskRequest) throws {
        let context = try resolvedContext().get()
        if let refusal = context.permission(for: taskRequest.identifier, kind: taskRequest.kind) { throw refusal }
        let submission = try taskRequest.submission(app: context.app)
        // An earliestBeginDate more than ten years away is refused here as the scheduler would.
        let now = Date()
        if let problem = Command(issuedAt: now, action: .submit(submission)).outOfBounds(now: now) {
            throw Error(.unavailable, problem.description)
        }
        let connection = SchedulerConnection(context: context)
        // Processing is for apps a person uses (`processingRecentUseDays`): a process a person
        // started that asks for it is such a use, recorded before the request so the scheduler
        // knows it when it weighs the request. Not awaited, like the use at launch.
        if submission.kind == .processing, environment["BGTASK_LAUNCH_ID"] == nil,
           connection.enqueue(.appUsed(app: context.app, uses: [now])) == nil {
            logger.warning("cannot record this use of \(context.app) in \(context.paths.inbox)")
        }
        _ = try connection.request(.submit(submission))
        if let warning = DistantBeginDate.warning(identifier: submission.identifier.rawValue, earliest: submission.earliestBeginDate, now: now) {
            logger.warning("\(warning)")
        }
    }

    /// Cancels the pending request with `identifier`, if there is one. A request that is already
    /// running is not affected.
    public func cancel(taskRequestWithIdentifier identifier: String) {
        guard case .success(let context) = resolvedContext(), let id = try? Identifier(validating: identifier) else { return }
        SchedulerConnection(context: context).tell(.cancel(app: context.app, identifier: id))
    }

    /// Cancels every pending request of the app.
    public func cancelAllTaskRequests() {
        guard case .success(let context) = resolvedContext() else { return }
        SchedulerConnection(context: context).tell(.cancelAll(app: context.app))
    }

    /// Copies of the app's pending requests, read from the scheduler's state. Running tasks are
    /// not included.
    public func pendingTaskRequests() async -> sending [BGTaskRequest] {
        guard case .success(let context) = resolvedContext() else { return [] }
        let directory = "\(context.paths.requests)/\(context.app)"
        let names = ((try? StateFiles.names(in: directory)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
        return names.compactMap { name in
            guard let data = try? StateFiles.read("\(directory)/\(name)"),
                  let pending = try? JSONFormat.decode(PendingRequest.self, from: data) else { return nil }
            return BGTaskRequest.copy(of: pending)
        }
    }
}
