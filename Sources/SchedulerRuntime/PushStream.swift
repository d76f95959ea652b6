import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// One push subscription kept open: connects to the topic's JSON stream (resuming after the
/// cursor with `since=`), turns each message that is a push into a `push` command made durable
/// in the inbox, and only then moves the cursor; reconnects with backoff when the stream ends.
///
/// It lives on the subscribers' event loop, never the scheduler's loop: it writes the inbox (as
/// any client does) and `subscriptions/<app>.json`, and hands its events to the loop. No Swift
/// task or Dispatch queue is involved: those would start libdispatch's worker-pool monitor,
/// which then wakes the process every second for good.
final class PushStream: @unchecked Sendable {
    // @unchecked: the mutable state below is touched on `loop` only.
    let app: Identifier
    let subscription: PushSubscription
    private let client: HTTPClient
    private let loop: any EventLoop
    private let paths: StatePaths
    private let statusFile: SubscriptionStatusFile
    /// Takes an event for the log; called on `loop`.
    private let report: @Sendable (Event) -> Void

    private var cursor: String?
    private var failures: Int
    private var stopped = false
    private var request: HTTPClient.Task<Void>?
    private var retry: Scheduled<Void>?

    private var url: String { subscription.ntfy }
    /// The subscription's URL as events show it (``URLText``).
    private var shownURL: String { URLText.hidingCredentials(subscription.ntfy) }

    /// How a connection ended.
    struct End: Error {
        var reason: String
        /// The server had opened the stream: the connection was healthy until it ended.
        var opened: Bool
    }

    init(app: Identifier, subscription: PushSubscription, client: HTTPClient, loop: any EventLoop, paths: StatePaths,
         statusFile: SubscriptionStatusFile, report: @escaping @Sendable (Event) -> Void) {
        self.app = app
        self.subscription = subscription
        self.client = client
        self.loop = loop
        self.paths = paths
        self.statusFile = statusFile
        self.report = report
        cursor = statusFile.stream(subscription.ntfy)?.lastMessageID
        failures = statusFile.stream(subscription.ntfy)?.failures ?? 0
    }

    /// Connects, and keeps connecting until ``stop()``. Safe from any thread.
    func start() {
        loop.execute { self.connect() }
    }

    /// Ends the connection and any planned attempt; the stream writes nothing more. Safe from any
    /// thread; the returned future completes once it is done.
    @discardableResult
    func stop() -> EventLoopFuture<Void> {
        loop.submit {
            self.stopped = true
            self.retry?.cancel()
            self.request?.cancel()
        }
    }

    private func connect() {
        guard !stopped else { return }
        updateStatus { $0.state = .connecting; $0.nextAttemptAt = nil }
        var headers = HTTPHeaders()
        headers.add(name: "Accept", value: "application/x-ndjson")
        if let file = subscription.authorizationFile {
            switch AuthorizationFile.value(at: file) {
            case .success(let value): headers.add(name: "Authorization", value: value)
            case .failure(let refusal): return ended(End(reason: refusal.description, opened: false))
            }
        }
        let request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(url: subscription.streamURL(since: cursor), method: .GET, headers: headers)
        } catch {
            return ended(End(reason: "cannot make a request of \(shownURL): \(error)", opened: false))
        }
        let connection = StreamConnection(loop: loop, opened: { [self] in connected() },
                                          take: { [self] (event) throws(End) in try take(event) })
        let task = client.execute(request: request, delegate: connection, eventLoop: .delegateAndChannel(on: loop))
        self.request = task
        task.futureResult.hop(to: loop).whenComplete { [self] result in
            switch result {
            case .success: ended(connection.end(error: nil))
            case .failure(let error): ended(connection.end(error: error))
            }
        }
    }

    /// Plans the next attempt: 1 s after a stream that had opened, later after each failure.
    private func ended(_ end: End) {
        request = nil
        guard !stopped else { return }
        failures = end.opened ? 0 : failures + 1
        let delay = ReconnectBackoff.delay(afterFailures: failures)
        let now = Date()
        updateStatus { stream in
            stream.state = end.opened ? .connecting : .failing
            stream.lastError = end.reason
            stream.lastErrorAt = now
            stream.failures = failures
            stream.nextAttemptAt = now.addingTimeInterval(delay)
            stream.connectedAt = nil
        }
        let what = end.opened ? "ended" : "failed (\(failures) in a row)"
        report(Event(time: now, type: .pushSubscription, app: app, reason: end.opened ? "disconnected" : "failed",
                     message: "\(app): push subscription \(shownURL) \(what): \(end.reason); reconnecting in \(DurationText.compact(delay))"))
        retry = loop.scheduleTask(in: .milliseconds(Int64(delay * 1000))) { [self] in connect() }
    }

    private func connected() {
        guard !stopped else { return }
        failures = 0
        let now = Date()
        updateStatus { stream in
            stream.state = .connected
            stream.connectedAt = now
            stream.failures = 0
            stream.nextAttemptAt = nil
        }
        let resuming = cursor.map { " (since message \($0))" } ?? ""
        report(Event(time: now, type: .pushSubscription, app: app, reason: "connected",
                     message: "\(app): push subscription \(shownURL) connected\(resuming)"))
    }

    /// A `message` event: a push made durable in the inbox, then the cursor moved past it; or an
    /// event saying why it is no push (and the cursor moved past it too, so it is not read again).
    /// The writes block this event loop, which only the subscribers use: a slow disk holds back
    /// their reading, never the scheduler.
    private func take(_ event: NtfyStreamEvent) throws(End) {
        guard !stopped else { throw End(reason: "stopped", opened: true) }
        let now = Date()
        switch event.push(for: app, source: shownURL) {
        case .failure(let refusal):
            report(Event(time: now, type: .pushDropped, app: app, reason: "notAPush",
                         message: "\(app): \(refusal.description) (from \(shownURL))"))
            // An id unfit for a cursor (empty, too long) is not kept: `since=` could not name it.
            if PushRequest(app: app, messageID: event.id).problem == nil { advance(to: event.id, at: now) }
        case .success(let push):
            let command = Command(issuedAt: now, issuerPID: getpid(), action: .push(push))
            do {
                try Inbox(paths: paths).enqueue(command)
            } catch {
                throw End(reason: "cannot write message \(event.shownID) into the inbox: \(error.description)", opened: true)
            }
            advance(to: event.id, at: now)
        }
    }

    private func advance(to id: String, at now: Date) {
        cursor = id
        updateStatus { stream in
            stream.lastMessageID = id
            stream.lastMessageAt = now
        }
    }

    /// Writes a change to the status file; a failure (a full disk) is an event, and the stream
    /// goes on: the cursor in memory is right, and a message read again after a restart is a
    /// duplicate the scheduler drops.
    private func updateStatus(_ change: (inout SubscriptionStatus.Stream) -> Void) {
        guard !stopped else { return }
        do {
            try statusFile.update(url, change)
        } catch {
            report(Event(time: Date(), type: .pushSubscription, app: app, reason: "statusNotWritten",
                         message: "\(app): cannot write the status of push subscription \(shownURL): \(error.description)"))
        }
    }
}
