import CLinuxSupport
import Foundation
import Logging
import Synchronization
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Hands this process's tasks to their handlers and delivers expirations.
///
/// The scheduler records every task it hands to a process in `tasks/<app>/<id>.json`, and at
/// expiry marks it `expiring` and sends the manifest's expiration signal. One thread of the
/// library's own waits on both (inotify on that folder, the signal through a pipe), so a handler
/// that keeps its own thread busy still hears of its expiry at once. Nothing polls.
final class TaskDelivery: Sendable {
    private struct Entry {
        let task: BGTask
        /// Tells this hand-over from a later one with the same identifier.
        let startedAt: Date
        var completed = false
        var handle: Task<Void, Never>?
    }

    private struct Guarded {
        var entries: [String: Entry] = [:]
        /// Finishing tasks begun by this process, by their scheduler identifier.
        var finishing: [String: (handler: (@Sendable () -> Void)?, expired: Bool)] = [:]
        /// Tasks the launch environment announced that have not been seen on disk yet.
        var expected: Set<String> = []
        var expectedUntil: Date?
        var sendsInFlight = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        /// Launch handlers are all registered (launching has finished): tasks may start. Until
        /// then (a finishing task begun first) handed tasks wait rather than find no handler.
        var startsAllowed = false

        var isIdle: Bool {
            expected.isEmpty && sendsInFlight == 0 && entries.values.allSatisfy(\.completed)
        }
    }

    let context: AppContext
    private let connection: SchedulerConnection
    private let handlers: @Sendable (String, TaskKind, PushType) -> LaunchHandler?
    private let logger: Logger
    private let guarded = Mutex<Guarded>(Guarded())
    /// Serialises reading the folder and acting on it, whichever thread asks.
    private let scanning = Mutex<Void>(())
    private let wakePipe: WakePipe
    private let pid = getpid()
    /// Read only by the delivery thread once it runs.
    private nonisolated(unsafe) let watcher: ChangeWatcher

    init(context: AppContext, handlers: @escaping @Sendable (String, TaskKind, PushType) -> LaunchHandler?, logger: Logger,
         expected: Set<String>) throws(BGTaskScheduler.Error) {
        self.context = context
        connection = SchedulerConnection(context: context)
        self.handlers = handlers
        self.logger = logger
        do {
            wakePipe = try WakePipe()
        } catch {
            throw .init(.unavailable, "\(error)")
        }
        do {
            watcher = try ChangeWatcher()
            try watcher.watch(context.paths.tasks, mask: UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR))
        } catch {
            throw .init(.unavailable, "cannot watch \(context.paths.tasks): \(error)")
        }
        guarded.withLock {
            $0.expected = expected
            $0.expectedUntil = expected.isEmpty ? nil : Date().addingTimeInterval(10)
        }
    }

    /// Installs the expiration signal handler and starts the thread.
    func start() throws(BGTaskScheduler.Error) {
        let signal = SignalName.number(of: context.manifest.expirationSignal) ?? SIGUSR1
        guard bg_signal_to_pipe(signal, wakePipe.writeEnd) == 0 else {
            throw .init(.unavailable, "cannot handle \(context.manifest.expirationSignal): \(String(cString: strerror(errno)))")
        }
        let thread = Thread { [self] in self.run() }
        thread.name = "BackgroundTasks delivery"
        thread.start()
    }

    private func run() {
        var watchingAppFolder = false
        while true {
            if !watchingAppFolder {
                watchingAppFolder = (try? watcher.watch(context.tasksDirectory)) != nil
            }
            scan()
            var poll = KernelPoll<Int32>()
            poll.watch(watcher.descriptor, watcher.descriptor)
            poll.watch(wakePipe.readEnd, wakePipe.readEnd)
            let until = guarded.withLock { $0.expectedUntil }
            let timeout = until.map { Int32(max(0, min($0.timeIntervalSinceNow * 1000 + 1, 60_000))) } ?? -1
            // Whatever woke it, the folder is read again at the top of the loop.
            if poll.wait(milliseconds: timeout) == nil { return }
            wakePipe.drain()
            for change in watcher.drain() where change.directory == context.tasksDirectory && change.name.isEmpty
                && change.mask & UInt32(IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                watchingAppFolder = false
            }
            if !watcher.watchedDirectories.contains(context.tasksDirectory) { watchingAppFolder = false }
        }
    }

    /// Launching has finished: handed tasks may start.
    func allowStarts() {
        guarded.withLock { $0.startsAllowed = true }
        poke()
    }

    /// Wakes the thread to read the folder again.
    func poke() {
        wakePipe.wake()
    }

    // MARK: - Reading the folder

    /// Reads this process's tasks and acts on what changed: new ones start, expiring ones hear of
    /// it, finished ones are forgotten.
    func scan() {
        scanning.withLock { _ in
            let mine = readOwnTasks()
            var starts: [(BGTask, LaunchHandler?, PushPayload?, PushType)] = []
            var expirations: [@Sendable () -> Void] = []
            var cancellations: [Task<Void, Never>] = []
            let waiters = guarded.withLock { state -> [CheckedContinuation<Void, Never>] in
                let present = Dictionary(mine.map { ($0.identifier.rawValue, $0) }, uniquingKeysWith: { first, _ in first })
                for task in mine {
                    let id = task.identifier.rawValue
                    state.expected.remove(id)
                    if task.kind == .finishing {
                        if task.state == .expiring, var entry = state.finishing[id], !entry.expired {
                            entry.expired = true
                            state.finishing[id] = entry
                            if let handler = entry.handler { expirations.append(handler) }
                        }
                        continue
                    }
                    guard state.startsAllowed else { continue }
                    if let entry = state.entries[id], entry.startedAt == task.startedAt {
                        if task.state == .expiring, !entry.task.isExpired {
                            expirations.append { entry.task.deliverExpiration() }
                            if let handle = entry.handle { cancellations.append(handle) }
                        }
                        continue
                    }
                    let bgTask = BGTask.make(identifier: id, kind: task.kind) { [weak self] success, answer in
                        self?.complete(identifier: id, startedAt: task.startedAt, success: success, answer: answer)
                    }
                    state.entries[id] = Entry(task: bgTask, startedAt: task.startedAt)
                    let type = task.push?.pushType ?? .background
                    starts.append((bgTask, handlers(id, task.kind, type), task.push?.payload, type))
                    if task.state == .expiring {
                        // Already expiring when first seen: its handler starts first, then hears
                        // of the expiry, and an async one is cancelled.
                        expirations.append { [weak self] in
                            bgTask.deliverExpiration()
                            self?.cancelHandle(of: bgTask)
                        }
                    }
                }
                for (id, entry) in state.entries where state.startsAllowed && present[id]?.startedAt != entry.startedAt {
                    // Completed and applied, or ended by someone else (bgctl complete).
                    if !entry.completed, let handle = entry.handle { cancellations.append(handle) }
                    state.entries[id] = nil
                }
                if let until = state.expectedUntil, until <= Date() || state.expected.isEmpty {
                    if !state.expected.isEmpty {
                        logger.warning("the scheduler never handed over \(state.expected.sorted().joined(separator: ", ")); not waiting for them")
                    }
                    state.expected.removeAll()
                    state.expectedUntil = nil
                }
                return takeWaitersIfIdle(&state)
            }
            for (task, handler, payload, type) in starts { begin(task, handler: handler, payload: payload, type: type) }
            for expiration in expirations { expiration() }
            for handle in cancellations { handle.cancel() }
            for waiter in waiters { waiter.resume() }
        }
    }

    private func readOwnTasks() -> [LaunchedTask] {
        let directory = context.tasksDirectory
        let names = (try? StateFiles.names(in: directory)) ?? []
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            guard let data = try? StateFiles.read("\(directory)/\(name)"),
                  let task = try? JSONFormat.decode(LaunchedTask.self, from: data), task.pid == pid else { return nil }
            return task
        }
    }

    // MARK: - Running handlers

    private func begin(_ task: BGTask, handler: LaunchHandler?, payload: PushPayload?, type: PushType) {
        switch handler {
        case nil where task.kind == .remoteNotification && type == .voip:
            logger.error("no PushRegistry with desiredPushTypes [.voIP] is registered for VoIP push \(task.identifier); completing it as failed")
            task.setTaskCompleted(success: false)
        case nil where task.kind == .remoteNotification:
            logger.error("no push handler is registered for \(task.identifier) (BGApplication.shared.registerForRemoteNotifications); answering failed")
            task.setTaskCompleted(answering: .failed)
        case nil:
            logger.error("no launch handler is registered for \(task.identifier); completing it as failed")
            task.setTaskCompleted(success: false)
        case .callback(let queue, let handler)?:
            (queue ?? DispatchQueue.global()).async { handler(task) }
        case .async(let action)?:
            keep(Task.detached {
                await action()
                task.setTaskCompleted(success: !Task.isCancelled && !task.isExpired)
            }, of: task)
        case .push(let handler)?:
            guard let payload else {
                logger.error("push \(task.identifier) carries no payload in its task file; answering failed")
                task.setTaskCompleted(answering: .failed)
                return
            }
            keep(Task.detached {
                let result = await handler(payload.userInfo)
                // Past its budget the push's work did not finish in time, whatever the handler
                // says after being cancelled.
                task.setTaskCompleted(answering: Task.isCancelled || task.isExpired ? .failed : result.fetchResult)
            }, of: task)
        case .voip(let handler)?:
            guard let payload else {
                logger.error("VoIP push \(task.identifier) carries no payload in its task file; completing it as failed")
                task.setTaskCompleted(success: false)
                return
            }
            handler(payload) { task.setTaskCompleted(success: !task.isExpired) }
        }
    }

    /// Keeps the `Task` running `task`'s async handler, so expiry can cancel it; cancels it at
    /// once when the expiry came first.
    private func keep(_ handle: Task<Void, Never>, of task: BGTask) {
        let cancelNow = guarded.withLock { state -> Bool in
            guard var entry = state.entries[task.identifier], entry.task === task else { return false }
            entry.handle = handle
            state.entries[task.identifier] = entry
            return task.isExpired
        }
        if cancelNow { handle.cancel() }
    }

    private func cancelHandle(of task: BGTask) {
        let handle = guarded.withLock { state -> Task<Void, Never>? in
            guard let entry = state.entries[task.identifier], entry.task === task else { return nil }
            return entry.handle
        }
        handle?.cancel()
    }

    private func complete(identifier: String, startedAt: Date, success: Bool, answer: FetchResult?) {
        guarded.withLock { state in
            if var entry = state.entries[identifier], entry.startedAt == startedAt {
                entry.completed = true
                state.entries[identifier] = entry
            }
            state.sendsInFlight += 1
        }
        let id = try! Identifier(validating: identifier)
        send(answer.map { .answerPush(app: context.app, identifier: id, result: $0) }
            ?? .complete(app: context.app, identifier: id, success: success))
    }

    /// Makes the command durable on the caller's thread (so the app may exit right after), then
    /// waits for the scheduler to apply it off that thread, counting it until then.
    private func send(_ action: CommandAction) {
        let connection = connection
        let command = connection.enqueue(action)
        if command == nil { logger.error("cannot write to the scheduler's inbox in \(context.paths.inbox)") }
        DispatchQueue.global().async { [self] in
            if let command, connection.outcome(of: command) == nil, connection.schedulerIsRunning {
                logger.warning("the scheduler did not confirm \(command.action.name.rawValue) \(command.id)")
            }
            let waiters = guarded.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.sendsInFlight -= 1
                return takeWaitersIfIdle(&state)
            }
            for waiter in waiters { waiter.resume() }
            poke()
        }
    }

    // MARK: - Finishing tasks

    /// Notes a finishing task begun for this process, so its expiration reaches `handler`.
    func trackFinishing(_ identifier: String, handler: (@Sendable () -> Void)?) {
        guarded.withLock { $0.finishing[identifier] = (handler, false) }
        poke()
    }

    /// Ends a finishing task: tells the scheduler and forgets it.
    func endFinishing(_ identifier: Identifier) {
        guarded.withLock { state in
            state.finishing[identifier.rawValue] = nil
            state.sendsInFlight += 1
        }
        send(.complete(app: context.app, identifier: identifier, success: true))
    }

    // MARK: - Waiting for the end

    /// Returns once every task handed to this process has completed and the scheduler has applied
    /// the completions.
    func waitUntilIdle() async {
        scan()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = guarded.withLock { state -> Bool in
                if state.isIdle { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Whether nothing is running, expected or being sent right now.
    var isIdleNow: Bool { guarded.withLock { $0.isIdle } }

    private func takeWaitersIfIdle(_ state: inout Guarded) -> [CheckedContinuation<Void, Never>] {
        guard state.isIdle, !state.idleWaiters.isEmpty else { return [] }
        defer { state.idleWaiters.removeAll() }
        return state.idleWaiters
    }
}
