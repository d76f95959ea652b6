import FoundationEssentials
import NIOCore
import NIOHTTP1
import Synchronization

/// The topics of a ``PushTopicServer``: the stored messages, the open streams and the faults.
/// Every write to a stream is decided under the one lock, so a stream gets its backlog and the
/// messages published after it in order, each once.
final class TopicHub: Sendable {
    struct OpenStream {
        let channel: any Channel
        let topic: String
        var messagesSent = 0
        /// The faults' `closeAfterMessages` when the stream opened.
        let closeAfter: Int?
    }

    struct State {
        var messages: [String: [TopicMessage]] = [:]
        var streams: [ObjectIdentifier: OpenStream] = [:]
        var faults = PushTopicServer.Faults()
        var subscribes: [SubscribeRecord] = []
        var keepaliveInterval: TimeAmount?
        var isStopped = false
    }

    let state: Mutex<State>
    /// ntfy's default message cache duration.
    static let cacheSeconds = 12 * 3600

    init(keepaliveInterval: TimeAmount?) {
        state = Mutex(State(keepaliveInterval: keepaliveInterval))
    }

    // MARK: - Publishing

    /// Stores the message and writes it to the topic's open streams.
    func publish(topic: String, message: String, priority: Int?, now: Date = Date()) -> TopicMessage {
        let time = Int(now.timeIntervalSince1970)
        let stored = TopicMessage(id: TopicMessage.newID(), time: time, expires: time + Self.cacheSeconds,
                                  topic: topic, message: message, priority: priority)
        state.withLock { state in
            state.messages[topic, default: []].append(stored)
            for (key, stream) in state.streams where stream.topic == topic {
                state.streams[key] = Self.send(stored, on: stream)
            }
        }
        return stored
    }

    /// Writes one message line; ends the stream when it has sent its `closeAfter` messages.
    /// Returns the stream as it is afterwards.
    private static func send(_ message: TopicMessage, on stream: OpenStream) -> OpenStream {
        var stream = stream
        if let limit = stream.closeAfter, stream.messagesSent >= limit { return stream }
        write(message.streamLine + "\n", on: stream.channel)
        stream.messagesSent += 1
        if let limit = stream.closeAfter, stream.messagesSent >= limit {
            let channel = stream.channel
            later(channel) { channel.writeAndFlush(HTTPServerResponsePart.end(nil)).whenComplete { _ in channel.close(promise: nil) } }
        }
        return stream
    }

    /// Runs `body` on the channel's event loop as a task of its own, also when called there:
    /// writes decided under the lock happen in the order decided, and a close they cause
    /// (``forget(_:)``) never finds the lock held.
    static func later(_ channel: any Channel, _ body: @escaping @Sendable () -> Void) {
        channel.eventLoop.execute(body)
    }

    static func write(_ text: String, on channel: any Channel) {
        later(channel) { channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: text))), promise: nil) }
    }

    /// Writes a bad line into every open stream of `topic`.
    func inject(_ fault: LineFault, topic: String) {
        state.withLock { state in
            for stream in state.streams.values where stream.topic == topic {
                let channel = stream.channel
                switch fault {
                case .garbage:
                    Self.write("this is not json {\n", on: channel)
                case .huge(let bytes):
                    let padding = String(repeating: "x", count: max(0, bytes - 80))
                    Self.write(TopicMessage.line(.init(id: TopicMessage.newID(), event: "message", topic: topic, message: padding)) + "\n", on: channel)
                case .closeMidLine:
                    let line = TopicMessage.line(.init(id: TopicMessage.newID(), event: "message", topic: topic,
                                                            message: #"{"aps":{"content-available":1}}"#))
                    // Flushed, then closed without the chunked body's last chunk: an abrupt end.
                    let half = String(line.prefix(line.count / 2))
                    Self.later(channel) {
                        channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: half))))
                            .whenComplete { _ in channel.close(promise: nil) }
                    }
                }
            }
        }
    }

    // MARK: - Subscribing

    /// Answers `GET /<topic>/json`: checks the faults, then opens the stream with its backlog.
    /// Runs on the channel's event loop.
    func subscribe(topic: String, since: String?, authorization: String?, keepAlive: Bool, channel: any Channel) {
        state.withLock { state in
            var record = SubscribeRecord(topic: topic, since: since, authorization: authorization, status: 200)
            defer { state.subscribes.append(record) }
            if state.isStopped {
                record.status = 503
                Self.answer(503, "server stopping\n", keepAlive: false, on: channel)
                return
            }
            if let required = state.faults.requiredAuthorization, authorization != required {
                record.status = 401
                Self.answer(401, #"{"code":40101,"http":401,"error":"unauthorized"}"# + "\n", keepAlive: keepAlive, on: channel)
                return
            }
            if let status = state.faults.status {
                record.status = status
                Self.answer(status, #"{"http":\#(status),"error":"injected"}"# + "\n", keepAlive: keepAlive, on: channel)
                return
            }
            let stored = state.messages[topic] ?? []
            let backlog: [TopicMessage]
            switch Self.messages(stored, since: since) {
            case .some(let found): backlog = found
            case .none:
                record.status = 400
                Self.answer(400, #"{"code":40008,"http":400,"error":"invalid since parameter"}"# + "\n", keepAlive: keepAlive, on: channel)
                return
            }
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: "application/x-ndjson; charset=utf-8")
            headers.add(name: "Cache-Control", value: "no-cache")
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: headers)
            Self.later(channel) { channel.write(HTTPServerResponsePart.head(head), promise: nil) }
            Self.write(TopicMessage.eventLine("open", topic: topic, now: Date()) + "\n", on: channel)
            var stream = OpenStream(channel: channel, topic: topic, closeAfter: state.faults.closeAfterMessages)
            for message in backlog { stream = Self.send(message, on: stream) }
            state.streams[ObjectIdentifier(channel)] = stream
            if let interval = state.keepaliveInterval {
                let task = channel.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                    Self.write(TopicMessage.eventLine("keepalive", topic: topic, now: Date()) + "\n", on: channel)
                }
                channel.closeFuture.whenComplete { _ in task.cancel() }
            }
        }
    }

    /// The stored messages after `since`: a message id (none when the id is unknown), `all`, or
    /// Unix seconds; `nil` when `since` is none of these. Without `since`, none: only new ones.
    static func messages(_ stored: [TopicMessage], since: String?) -> [TopicMessage]? {
        guard let since else { return [] }
        if since == "all" { return stored }
        if let index = stored.firstIndex(where: { $0.id == since }) { return Array(stored[(index + 1)...]) }
        if let seconds = Int(since) { return stored.filter { $0.time >= seconds } }
        if since.count == 12, since.allSatisfy({ $0.isLetter || $0.isNumber }) { return [] }
        return nil
    }

    func forget(_ channel: any Channel) {
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    static func answer(_ status: Int, _ body: String, keepAlive: Bool, contentType: String = "application/json",
                       on channel: any Channel) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType)
        headers.add(name: "Content-Length", value: String(body.utf8.count))
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: .init(statusCode: status), headers: headers)
        later(channel) {
            channel.write(HTTPServerResponsePart.head(head), promise: nil)
            channel.write(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: body))), promise: nil)
            let ended = channel.writeAndFlush(HTTPServerResponsePart.end(nil))
            if !keepAlive { ended.whenComplete { _ in channel.close(promise: nil) } }
        }
    }
}
