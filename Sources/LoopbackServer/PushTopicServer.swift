import FoundationEssentials
import NIOCore
import NIOHTTP1
import NIOPosix

/// A loopback push server on 127.0.0.1 that speaks ntfy's documented API
/// (https://docs.ntfy.sh/subscribe/api/), for tests, benchmarks and `bgtop --demo`:
///
/// - `GET /<topic>/json[?since=<id>|all|<unix seconds>]` answers `200 application/x-ndjson` and
///   streams one JSON object a line: an `open` event, the stored messages after `since`, then
///   each message as it is published, and `keepalive` events every `keepaliveInterval`;
/// - `POST` or `PUT /<topic>` publishes the body as a message (`Priority`/`X-Priority`: 1–5 or
///   `min`…`max`) and answers the message's JSON.
///
/// It misbehaves on request (``Faults``, ``inject(_:topic:)``) and records every subscribe
/// request (``subscribeRequests``).
public final class PushTopicServer: Sendable {
    /// How subscribe requests are answered from now on.
    public struct Faults: Hashable, Sendable {
        /// Each stream opened from now on ends after sending this many messages (its backlog counts).
        public var closeAfterMessages: Int?
        /// Subscribe requests without exactly this `Authorization` value get `401`.
        public var requiredAuthorization: String?
        /// Subscribe requests get this status (a 5xx, say) instead of a stream.
        public var status: Int?

        public init(closeAfterMessages: Int? = nil, requiredAuthorization: String? = nil, status: Int? = nil) {
            self.closeAfterMessages = closeAfterMessages
            self.requiredAuthorization = requiredAuthorization
            self.status = status
        }
    }

    /// The port the server listens on, on 127.0.0.1.
    public let port: Int
    let hub: TopicHub
    private let group: MultiThreadedEventLoopGroup
    private let listener: any Channel

    private init(port: Int, hub: TopicHub, group: MultiThreadedEventLoopGroup, listener: any Channel) {
        self.port = port
        self.hub = hub
        self.group = group
        self.listener = listener
    }

    /// Starts a server with one event-loop thread at a free port. `keepaliveInterval`: how often
    /// open streams get a `keepalive` event (ntfy: 45 s); `nil` for never.
    public static func start(keepaliveInterval: Duration? = nil) async throws -> PushTopicServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let hub = TopicHub(keepaliveInterval: keepaliveInterval.map { TimeAmount($0) })
        do {
            let listener = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
                .childChannelInitializer { child in
                    child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.configureHTTPServerPipeline()
                        try child.pipeline.syncOperations.addHandler(TopicRequestHandler(hub: hub))
                    }
                }
                .bind(host: "127.0.0.1", port: 0).get()
            return PushTopicServer(port: listener.localAddress?.port ?? 0, hub: hub, group: group, listener: listener)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// The topic's URL, as a manifest's `push` names it: `http://127.0.0.1:<port>/<topic>`.
    public func url(of topic: String) -> String {
        "http://127.0.0.1:\(port)/\(topic)"
    }

    /// Publishes `message` on `topic` (as `POST /<topic>` would) and returns its id.
    @discardableResult
    public func publish(topic: String, message: String, priority: Int? = nil) -> String {
        hub.publish(topic: topic, message: message, priority: priority).id
    }

    /// The faults applied to subscribe requests from now on.
    public var faults: Faults {
        get { hub.state.withLock { $0.faults } }
        set { hub.state.withLock { $0.faults = newValue } }
    }

    /// Writes a bad line into every stream of `topic` open now.
    public func inject(_ fault: LineFault, topic: String) {
        hub.inject(fault, topic: topic)
    }

    /// Every subscribe request so far, oldest first.
    public var subscribeRequests: [SubscribeRecord] {
        hub.state.withLock { $0.subscribes }
    }

    /// How many streams of `topic` are open now.
    public func openStreams(of topic: String) -> Int {
        hub.state.withLock { state in state.streams.values.filter { $0.topic == topic }.count }
    }

    /// The messages stored for `topic`, oldest first.
    public func messages(of topic: String) -> [TopicMessage] {
        hub.state.withLock { $0.messages[topic] ?? [] }
    }

    /// Closes every stream and the listener, and stops the server's thread.
    public func stop() async {
        let channels = hub.state.withLock { state -> [any Channel] in
            state.isStopped = true
            return state.streams.values.map(\.channel)
        }
        try? await listener.close()
        for channel in channels { try? await channel.close() }
        try? await group.shutdownGracefully()
    }
}
