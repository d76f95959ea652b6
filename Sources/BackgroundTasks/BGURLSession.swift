import Foundation
import Logging
import Synchronization
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A background session, as a `URLSession` made from a background configuration: the scheduler
/// carries its transfers while the app runs or not, resumes them after restarts and dropped
/// connections, and the app hears how each ended — at once while it runs, or, when it was not
/// running, when the scheduler launches it for the session (`.urlSession(identifier)`).
///
/// Events reach the delegate on a thread of the session's own that waits on inotify for the
/// app's transfer records; nothing polls.
public final class BGURLSession: Sendable {
    public let configuration: BGURLSessionConfiguration
    public let delegate: (any BGURLSessionDelegate)?
    private let context: Result<AppContext, BGTaskScheduler.Error>
    private let guarded = Mutex<Guarded>(Guarded())
    /// Serialises reading the records and calling the delegate, whichever thread asks.
    private let delivering = Mutex<Void>(())
    private let wakePipe: WakePipe?
    /// Questions before delayed transfers begin (``BGURLSessionDelayedRequestDelegate``).
    let questions = DelayedRequestQuestions()
    let logger = Logger(label: "BackgroundTasks")
    /// Transfers async calls await (`download(for:)`), whose ends go to them, not the delegate.
    let awaited = AwaitedTransfers()

    private struct Guarded {
        var tasks: [String: BGURLSessionTask] = [:]
        /// Bytes last reported to the delegate, per transfer.
        var reported: [String: Int64] = [:]
        /// Ends already delivered (the acknowledgement may not have been applied yet).
        var delivered: Set<String> = []
        /// Refusals at `resume()`, delivered on the session's thread.
        var refusals: [(BGURLSessionTask, BGURLSessionError)] = []
        var counter = 0
        var invalidated = false
    }

    /// A session with `configuration`; `delegate` hears of progress and ends.
    public init(configuration: BGURLSessionConfiguration, delegate: (any BGURLSessionDelegate)? = nil) {
        self.configuration = configuration
        self.delegate = delegate
        context = AppContext.resolve()
        wakePipe = try? WakePipe()
        if case .success(let context) = context, let wakePipe, let watcher = try? ChangeWatcher() {
            // The scheduler creates transfers/ at start; until it has, the app's folder is
            // looked for again at each wake-up.
            _ = try? watcher.watch(context.paths.transfers, mask: UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR))
            let box = WatcherBox(watcher: watcher)
            let folder = "\(context.paths.transfers)/\(context.app)"
            let reference = WeakSession(self)
            let thread = Thread { Self.watch(reference, box, pipe: wakePipe, folder: folder) }
            thread.name = "BackgroundTasks session \(configuration.identifier)"
            thread.start()
        } else if case .failure(let error) = context {
            logger.error("background session \(configuration.identifier) is unavailable: \(error.message)")
        }
    }

    // MARK: - Making transfers

    /// A download of `url` into the app's downloads folder. Call `resume()` to start it.
    /// Made while ``download(from:)`` awaits `url` in this session, the task is that transfer, as
    /// for ``downloadTask(with:)-(URLRequest)``.
    public func downloadTask(with url: URL) -> BGURLSessionTask {
        promotingIfAwaited(BGURLSessionTask(identifier: nextIdentifier(), url: url, sourceFile: nil, direction: .download, session: self))
    }

    /// A download of `url` that completes only when the finished file's SHA-256 is
    /// `expectedSHA256` (64 hexadecimal digits, either case, as `sha256sum` prints them). Call
    /// `resume()` to start it.
    ///
    /// Apple's `URLSession` has no such check; here the scheduler makes it after the last byte
    /// arrived and before the file is moved into place, so a corrupted or substituted download
    /// never reaches `didFinishDownloadingTo`: the delegate hears `didCompleteWithError` with
    /// ``BGURLSessionError/Code/failed``, and the message names both digests. A value that is not
    /// a digest is refused at `resume()` (``BGURLSessionError/Code/refused``).
    public func downloadTask(with url: URL, expectedSHA256: String) -> BGURLSessionTask {
        BGURLSessionTask(identifier: nextIdentifier(), url: url, sourceFile: nil, direction: .download, session: self,
                         expectedSHA256: expectedSHA256)
    }

    /// An upload of `fileURL` to `url` (HTTP PUT). Call `resume()` to start it.
    public func uploadTask(with url: URL, fromFile fileURL: URL) -> BGURLSessionTask {
        BGURLSessionTask(identifier: nextIdentifier(), url: url, sourceFile: fileURL, direction: .upload, session: self)
    }

    /// The session's transfers the scheduler still carries (not yet completed, failed or cancelled).
    public func allTasks() -> [BGURLSessionTask] {
        records().filter { $0.state.isActive }.map(task(for:))
    }

    /// Delivers every event waiting for this session (ends of transfers the app has not heard
    /// of yet, and questions before delayed transfers begin, answered before this returns), then calls `urlSessionDidFinishEvents(forBackgroundURLSession:)`. Await it in the
    /// `.urlSession(identifier)` handler; the task completes when the handler returns.
    public func deliverPendingEvents() async {
        await offThePool { self.deliver() }
        await questions.waitForAnswers()
        delegate?.urlSessionDidFinishEvents(forBackgroundURLSession: self)
    }

    func nextTaskIdentifier() -> String { nextIdentifier() }

    private func nextIdentifier() -> String {
        let n = guarded.withLock { state -> Int in
            state.counter += 1
            return state.counter
        }
        return "task-\(Int(Date().timeIntervalSince1970 * 1000))-\(getpid())-\(n)"
    }

    // MARK: - Talking to the scheduler

    func submit(_ task: BGURLSessionTask) {
        guarded.withLock { $0.tasks[task.taskIdentifier] = task }
        if task.promotes { return promote(task) }
        let context: AppContext
        switch self.context {
        case .success(let found): context = found
        case .failure(let error):
            refuse(task, error.message)
            return
        }
        guard let id = try? Identifier(validating: task.taskIdentifier) else { return }
        // Checked before anything is written: a malformed digest reaches the delegate as a refusal.
        var sha256: String?
        if let text = task.expectedSHA256 {
            do {
                sha256 = try SHA256Hex(validating: text).rawValue
            } catch {
                refuse(task, "bad expectedSHA256: \(error.description)")
                return
            }
        }
        if let problem = TransferHeaderRules.problem(method: task.requestMethod, headers: task.requestHeaders,
                                                     secretNames: configuration.secretHTTPHeaderNames, direction: task.direction) {
            refuse(task, problem)
            return
        }
        let hints = task.hints
        let request = TransferRequest(
            app: context.app, identifier: id, session: configuration.identifier, direction: task.direction,
            url: task.originalURL.absoluteString, destination: task.direction == .download ? task.taskIdentifier : nil,
            sourceFile: task.sourceFile?.path, earliestBeginDate: hints.earliest, isDiscretionary: configuration.isDiscretionary,
            sessionSendsLaunchEvents: configuration.sessionSendsLaunchEvents,
            countOfBytesClientExpectsToSend: hints.send >= 0 ? hints.send : nil,
            countOfBytesClientExpectsToReceive: hints.receive >= 0 ? hints.receive : nil,
            timeoutIntervalForRequest: configuration.timeoutIntervalForRequest,
            timeoutIntervalForResource: configuration.timeoutIntervalForResource, sha256: sha256,
            method: task.requestMethod, headers: task.requestHeaders?.isEmpty == false ? task.requestHeaders : nil,
            secretHeaderNames: configuration.secretHTTPHeaderNames.isEmpty ? nil : configuration.secretHTTPHeaderNames,
            asksBeforeDelayedBegin: hints.earliest != nil && delegate is any BGURLSessionDelayedRequestDelegate,
            allowsExpensiveNetworkAccess: configuration.allowsExpensiveNetworkAccess)
        // The scheduler checks the numbers too; checking here says why without writing anything.
        let now = Date()
        if let problem = Command(issuedAt: now, action: .transferCreate(request)).outOfBounds(now: now) {
            refuse(task, problem.description)
            return
        }
        do throws(BGTaskScheduler.Error) {
            if try SchedulerConnection(context: context).requestAllowingQueue(.transferCreate(request)) == nil {
                // Not refused: it waits in the inbox, and its end will be told as usual.
                logger.warning("bgtaskd has not answered yet; transfer \(task.taskIdentifier) starts when it does")
            }
        } catch {
            refuse(task, error.message)
        }
    }

    func tell(_ make: (Identifier, Identifier) -> CommandAction, _ task: BGURLSessionTask) {
        guard case .success(let context) = context, let id = try? Identifier(validating: task.taskIdentifier) else { return }
        _ = SchedulerConnection(context: context).enqueue(make(context.app, id))
    }

    private func refuse(_ task: BGURLSessionTask, _ message: String) {
        logger.error("transfer \(task.taskIdentifier) was refused: \(message)")
        if awaited.refuse(task.taskIdentifier, BGURLSessionError(code: .refused, message: message)) { return }
        guarded.withLock { $0.refusals.append((task, BGURLSessionError(code: .refused, message: message))) }
        wakePipe?.wake()
    }

    deinit {
        wakePipe?.wake()
    }

    /// The app this session works for; `nil` when it has no usable manifest or state.
    var appContext: AppContext? {
        if case .success(let found) = context { return found }
        return nil
    }

    /// Has the session's thread read the records again.
    func wakeThread() {
        wakePipe?.wake()
    }

    /// Stops this session's thread. The scheduler carries its transfers on; another session
    /// with the same identifier (or a launch for it) hears how they end.
    public func finishTasksAndInvalidate() {
        guarded.withLock { $0.invalidated = true }
        wakePipe?.wake()
    }

    // MARK: - Events

    /// The session's thread: it holds the session only while delivering, never while it waits,
    /// so a session that is let go (or invalidated) ends its thread and closes its descriptors.
    private static func watch(_ reference: WeakSession, _ box: WatcherBox, pipe: WakePipe, folder: String) {
        var watchingFolder = false
        while true {
            do {
                guard let current = reference.session, !current.guarded.withLock({ $0.invalidated }) else { return }
                if !watchingFolder { watchingFolder = (try? box.watcher.watch(folder)) != nil }
                current.deliver()
            }
            var poll = KernelPoll<Int32>()
            poll.watch(box.watcher.descriptor, box.watcher.descriptor)
            poll.watch(pipe.readEnd, pipe.readEnd)
            // Whatever woke it, the session's records are read again at the top of the loop.
            if poll.wait() == nil { return }
            pipe.drain()
            _ = box.watcher.drain()
            if !box.watcher.watchedDirectories.contains(folder) { watchingFolder = false }
        }
    }

    private func records() -> [TransferRecord] {
        guard case .success(let context) = context else { return [] }
        let folder = "\(context.paths.transfers)/\(context.app)"
        let names = ((try? StateFiles.names(in: folder)) ?? []).filter { $0.hasSuffix(".json") }
        return names.compactMap { name in
            guard let data = try? StateFiles.read("\(folder)/\(name)"),
                  let record = try? JSONFormat.decode(TransferRecord.self, from: data),
                  record.session == configuration.identifier else { return nil }
            return TransferRecord.newest(record, progressFile: context.paths.transferProgress(record.key))
        }.sorted { ($0.createdAt, $0.key) < ($1.createdAt, $1.key) }
    }

    private func task(for record: TransferRecord) -> BGURLSessionTask {
        let task = guarded.withLock { state -> BGURLSessionTask in
            if let known = state.tasks[record.identifier.rawValue] { return known }
            let made = BGURLSessionTask(identifier: record.identifier.rawValue, url: URL(string: record.url) ?? URL(fileURLWithPath: "/"),
                                        sourceFile: record.sourceFile.map { URL(fileURLWithPath: $0) }, direction: record.direction,
                                        session: self, record: record, expectedSHA256: record.sha256,
                                        requestMethod: record.method, requestHeaders: record.headers)
            state.tasks[record.identifier.rawValue] = made
            return made
        }
        task.update(record)
        return task
    }

    /// Reads the session's records and tells the delegate what changed; each end once, then
    /// acknowledged so the scheduler forgets it.
    private func deliver() {
        delivering.withLock { _ in
            for (task, error) in guarded.withLock({ state in defer { state.refusals.removeAll() }; return state.refusals }) {
                delegate?.urlSession(self, task: task, didCompleteWithError: error)
            }
            guard case .success(let context) = context else { return }
            for record in records() {
                let id = record.identifier.rawValue
                switch awaited.route(record) {
                case .delegate: break
                case .withheld: continue
                case .acknowledgeUnheard:
                    _ = SchedulerConnection(context: context).enqueue(.transferAcknowledge(app: context.app, identifier: record.identifier))
                    continue
                }
                let task = task(for: record)
                let (previous, done) = guarded.withLock { ($0.reported[id] ?? 0, $0.delivered.contains(id)) }
                if done { continue }
                questions.ask(self, about: record, task: task, context: context)
                if record.bytesTransferred != previous {
                    guarded.withLock { $0.reported[id] = record.bytesTransferred }
                    // A count that went down means the transfer started over (an upload's retry, a
                    // server that ignored Range): report the bytes since the restart.
                    let delta = record.bytesTransferred >= previous ? record.bytesTransferred - previous : record.bytesTransferred
                    let expected = record.bytesExpected ?? -1
                    if record.direction == .download {
                        delegate?.urlSession(self, downloadTask: task, didWriteData: delta,
                                             totalBytesWritten: record.bytesTransferred, totalBytesExpectedToWrite: expected)
                    } else {
                        delegate?.urlSession(self, task: task, didSendBodyData: delta,
                                             totalBytesSent: record.bytesTransferred, totalBytesExpectedToSend: expected)
                    }
                }
                guard !record.state.isActive else { continue }
                _ = guarded.withLock { $0.delivered.insert(id) }
                switch record.state {
                case .completed:
                    if record.direction == .download, let destination = record.destination {
                        let location = URL(fileURLWithPath: "\(context.paths.downloads(of: context.app))/\(destination)")
                        delegate?.urlSession(self, downloadTask: task, didFinishDownloadingTo: location)
                    }
                    delegate?.urlSession(self, task: task, didCompleteWithError: nil)
                case .cancelled:
                    delegate?.urlSession(self, task: task, didCompleteWithError: BGURLSessionError(code: .cancelled, message: record.lastError ?? "cancelled"))
                default:
                    delegate?.urlSession(self, task: task, didCompleteWithError: BGURLSessionError(code: .failed, message: record.lastError ?? "failed"))
                }
                _ = SchedulerConnection(context: context).enqueue(.transferAcknowledge(app: context.app, identifier: record.identifier))
            }
        }
    }
}

/// How the session's thread refers to its session without keeping it alive.
private final class WeakSession: @unchecked Sendable {
    weak var session: BGURLSession?
    init(_ session: BGURLSession) { self.session = session }
}

/// The session thread's inotify watcher; only that thread uses it.
private final class WatcherBox: @unchecked Sendable {
    let watcher: ChangeWatcher
    init(watcher: ChangeWatcher) { self.watcher = watcher }
}
