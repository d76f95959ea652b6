import FoundationEssentials
import NIOCore
import NIOHTTP1
import NIOPosix
import StateMetrics
import TaskState

/// `bgtaskd --metrics ADDRESS`: serves ``StateMetrics`` at `GET /metrics` for Prometheus. One
/// event-loop thread that sleeps in epoll between scrapes; each scrape reads the state directory as
/// any reader does, so the scheduler's loop is never involved.
final class MetricsServer: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel

    /// Where it listens, as `HOST:PORT` (the port the kernel chose for port 0).
    let boundAddress: String

    /// `HOST:PORT`: an IPv4 or bracketed IPv6 literal, or `localhost`, and a port from 0 to 65535.
    static func parse(_ address: String) -> (host: String, port: Int)? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        var host = String(address[..<colon])
        let portText = address[address.index(after: colon)...]
        guard !portText.isEmpty, portText.allSatisfy({ ("0"..."9").contains($0) }), portText.count <= 5, let port = Int(portText), port <= 65_535 else {
            return nil
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard host == "localhost" || (try? SocketAddress(ipAddress: host, port: port)) != nil else { return nil }
        return (host, port)
    }

    init(host: String, port: Int, paths: StatePaths) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(MetricsHandler(paths: paths))
                }
            }
        do {
            channel = try bootstrap.bind(host: host, port: port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw error
        }
        let local = channel.localAddress
        let shownHost = local?.ipAddress.map { $0.contains(":") ? "[\($0)]" : $0 } ?? host
        boundAddress = "\(shownHost):\(local?.port ?? port)"
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

/// Answers `GET /metrics` (and `HEAD`); anything else is 404 or 405.
private final class MetricsHandler: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let paths: StatePaths
    private var head: HTTPRequestHead?

    init(paths: StatePaths) { self.paths = paths }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request): head = request
        case .body: break
        case .end:
            guard let request = head else { return }
            head = nil
            respond(to: request, context: context)
        }
    }

    private func respond(to request: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = request.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? request.uri
        var status = HTTPResponseStatus.ok
        var body = ""
        var contentType = "text/plain; charset=utf-8"
        var headers = HTTPHeaders()
        if path != "/metrics" {
            status = .notFound
            body = "not found: metrics are at /metrics\n"
        } else if request.method != .GET && request.method != .HEAD {
            status = .methodNotAllowed
            headers.add(name: "Allow", value: "GET, HEAD")
            body = "only GET and HEAD\n"
        } else {
            body = StateMetrics.text(of: StateSnapshot.load(paths), schedulerRunning: StateLock.holder(paths) != nil, now: Date())
            contentType = "text/plain; version=0.0.4; charset=utf-8"
        }
        let bytes = Array(body.utf8)
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: "\(bytes.count)")
        headers.add(name: "Connection", value: "close")
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: request.version, status: status, headers: headers))), promise: nil)
        if request.method != .HEAD {
            var buffer = context.channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
    }
}
