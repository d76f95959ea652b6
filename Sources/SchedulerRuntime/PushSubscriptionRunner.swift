import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOPosix
import Synchronization
import TaskState

/// The daemon's push subscribers: one ``PushStream`` per subscription of every loaded manifest,
/// started, stopped and restarted as manifests come, go and change.
///
/// The streams run on an event loop of their own (never the scheduler's loop); what they have to
/// say reaches the loop as events through a queue, announced by `wake` (the loop's notifier), as
/// the transfer engine's do. Until the first subscription there is no client and no thread.
final class PushSubscriptionRunner {
    private struct StreamKey: Hashable {
        var app: Identifier
        var subscription: PushSubscription
    }

    private let paths: StatePaths
    private let queue = ReportedEvents()
    private let wake: @Sendable () -> Void
    private var connection: SubscriptionClient?
    private var streams: [StreamKey: PushStream] = [:]
    private var statusFiles: [Identifier: SubscriptionStatusFile] = [:]

    /// `wake` is called, from any thread, when events are waiting in ``takeEvents()``.
    init(paths: StatePaths, wake: @escaping @Sendable () -> Void) {
        self.paths = paths
        self.wake = wake
    }

    /// Keeps exactly the subscriptions of `manifests` running: stops those no manifest names any
    /// more (or names differently), starts the new ones. An app's status file is kept when its
    /// manifest goes, so that its cursors are there if it comes back.
    func follow(_ manifests: [Identifier: AppManifest]) {
        var wanted: [Identifier: [PushSubscription]] = [:]
        for (app, manifest) in manifests where !manifest.push.isEmpty {
            var seen: Set<String> = []
            // One stream per URL: a second entry for the same topic would deliver each message twice.
            wanted[app] = manifest.push.filter { seen.insert($0.ntfy).inserted }
        }
        for (key, stream) in streams where wanted[key.app]?.contains(key.subscription) != true {
            stream.stop()
            streams[key] = nil
        }
        for app in statusFiles.keys where wanted[app] == nil { statusFiles[app] = nil }
        for (app, subscriptions) in wanted.sorted(by: { $0.key < $1.key }) {
            let file = statusFiles[app] ?? openStatusFile(of: app)
            statusFiles[app] = file
            do {
                try file.follow(urls: subscriptions.map(\.ntfy))
            } catch {
                report(Event(time: Date(), type: .pushSubscription, app: app, reason: "statusNotWritten",
                             message: "\(app): cannot write \(paths.subscriptions(of: app)): \(error.description)"))
            }
            for subscription in subscriptions where streams[StreamKey(app: app, subscription: subscription)] == nil {
                start(subscription, of: app, statusFile: file)
            }
        }
    }

    /// The events the streams reported since the last call, in order.
    func takeEvents() -> [Event] {
        queue.events.withLock { events in
            defer { events.removeAll() }
            return events
        }
    }

    /// Stops every stream and the client, and waits (a few seconds at most) for them to let go.
    func shutdown() {
        let stopping = streams.values.map { $0.stop() }
        streams.removeAll()
        guard let connection else { return }
        self.connection = nil
        _ = try? EventLoopFuture.andAllComplete(stopping, on: connection.loop).wait()
        connection.close()
    }

    private func start(_ subscription: PushSubscription, of app: Identifier, statusFile: SubscriptionStatusFile) {
        let connection = self.connection ?? SubscriptionClient()
        self.connection = connection
        let queue = queue
        let wake = wake
        let stream = PushStream(app: app, subscription: subscription, client: connection.client, loop: connection.loop,
                                paths: paths, statusFile: statusFile) { event in
            queue.events.withLock { $0.append(event) }
            wake()
        }
        streams[StreamKey(app: app, subscription: subscription)] = stream
        stream.start()
    }

    /// The status file of `app`, carrying over the cursors the last scheduler left.
    private func openStatusFile(of app: Identifier) -> SubscriptionStatusFile {
        switch SubscriptionStatusFile.load(app: app, paths: paths) {
        case .success(let kept):
            return SubscriptionStatusFile(app: app, paths: paths, kept: kept)
        case .failure(let error):
            // The start-up snapshot quarantines an unreadable file; one spoilt since starts afresh.
            report(Event(time: Date(), type: .pushSubscription, app: app, reason: "statusUnreadable",
                         message: "\(app): cannot read \(paths.subscriptions(of: app)) (\(error.description)); its streams start without a cursor"))
            return SubscriptionStatusFile(app: app, paths: paths, kept: nil)
        }
    }

    private func report(_ event: Event) {
        queue.events.withLock { $0.append(event) }
        wake()
    }
}

/// Events on their way from the streams' threads to the scheduler's loop.
private final class ReportedEvents: Sendable {
    let events = Mutex<[Event]>([])
}

/// The HTTP client of the subscribers and its one event-loop thread, made when the first
/// subscription starts.
private final class SubscriptionClient: Sendable {
    let client: HTTPClient
    private let group: MultiThreadedEventLoopGroup
    /// The one loop every stream and its connections run on.
    let loop: any EventLoop

    init() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        loop = group.next()
        var configuration = HTTPClient.Configuration(
            // A redirect would carry the Authorization header to wherever it points: refused.
            redirectConfiguration: .disallow,
            // The read timeout is the idle limit: a stream silent for that long is reconnected.
            timeout: .init(connect: .seconds(10), read: .seconds(Int64(ReconnectBackoff.idleSeconds))),
            decompression: .disabled)
        configuration.connectionPool = .init(idleTimeout: .seconds(5))
        client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    /// Shuts the client down, then stops the thread; called from the scheduler's loop thread.
    func close() {
        _ = try? client.shutdown().wait()
        try? group.syncShutdownGracefully()
    }
}
