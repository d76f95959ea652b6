import FoundationEssentials
import NIOCore
import NIOHTTP1

/// Reads the requests of one connection and hands each to the hub.
final class TopicRequestHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let hub: TopicHub
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    /// Publishing more than this is refused (ntfy's message limit is 4096 bytes).
    private static let maximumBody = 64 << 10

    init(hub: TopicHub) {
        self.hub = hub
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var part):
            if body.readableBytes <= Self.maximumBody { body.writeBuffer(&part) }
        case .end:
            guard let head else { return }
            self.head = nil
            answer(head, channel: context.channel)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        hub.forget(context.channel)
        context.fireChannelInactive()
    }

    private func answer(_ head: HTTPRequestHead, channel: any Channel) {
        let parts = head.uri.split(separator: "?", maxSplits: 1)
        let path = parts.first.map(String.init) ?? "/"
        let query = parts.count > 1 ? Self.query(String(parts[1])) : [:]
        let segments = path.split(separator: "/").map(String.init)
        let keepAlive = head.isKeepAlive
        switch (head.method, segments.count) {
        case (.GET, 2) where segments[1] == "json":
            hub.subscribe(topic: segments[0], since: query["since"], authorization: head.headers.first(name: "Authorization"),
                          keepAlive: keepAlive, channel: channel)
        case (.POST, 1), (.PUT, 1):
            guard body.readableBytes <= Self.maximumBody else {
                TopicHub.answer(413, #"{"http":413,"error":"message too large"}"# + "\n", keepAlive: false, on: channel)
                return
            }
            let header = head.headers.first(name: "X-Priority") ?? head.headers.first(name: "Priority")
            let priority = header.flatMap(TopicMessage.priority(header:))
            if header != nil && priority == nil {
                TopicHub.answer(400, #"{"code":40007,"http":400,"error":"invalid priority"}"# + "\n", keepAlive: keepAlive, on: channel)
                return
            }
            let message = hub.publish(topic: segments[0], message: String(buffer: body), priority: priority)
            TopicHub.answer(200, message.streamLine + "\n", keepAlive: keepAlive, on: channel)
        default:
            TopicHub.answer(404, #"{"http":404,"error":"not found"}"# + "\n", keepAlive: keepAlive, on: channel)
        }
    }

    /// `a=b&c=d`, each pair percent-decoded as URLComponents decodes it; a pair it refuses (a
    /// stray `%`, a space) is taken as written.
    private static func query(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            if let item = URLComponents(string: "?" + pair)?.queryItems?.first, !item.name.isEmpty {
                result[item.name] = item.value ?? ""
                continue
            }
            let halves = pair.split(separator: "=", maxSplits: 1).map(String.init)
            if let name = halves.first { result[name] = halves.count > 1 ? halves[1] : "" }
        }
        return result
    }
}
