import AsyncHTTPClient
import FoundationEssentials
import NIOCore
import NIOHTTP1
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// One connection of a ``PushStream``: reads the response as it arrives, cuts it into lines and
/// hands each ntfy event to the stream. Called by the HTTP client on the stream's event loop only.
final class StreamConnection: HTTPClientResponseDelegate, @unchecked Sendable {
    // @unchecked: every method runs on `loop` (the request is made with `.delegateAndChannel(on:)`).
    typealias Response = Void

    private let loop: any EventLoop
    /// Takes one event; throws ``PushStream/End`` to end the connection.
    private let take: (NtfyStreamEvent) throws(PushStream.End) -> Void
    private let opened: () -> Void
    private var lines = StreamLines()
    /// The server opened the stream (its first line came).
    private(set) var isOpen = false
    /// Why the connection ended, when this side ended it or knows better than the client's error.
    private var reason: String?

    init(loop: any EventLoop, opened: @escaping () -> Void, take: @escaping (NtfyStreamEvent) throws(PushStream.End) -> Void) {
        self.loop = loop
        self.opened = opened
        self.take = take
    }

    /// How it ended, given the client's error (`nil`: the server ended the response).
    func end(error: (any Error)?) -> PushStream.End {
        if let reason { return PushStream.End(reason: reason, opened: isOpen) }
        if lines.unfinishedBytes > 0 {
            let how = error.map { " (\(Self.describe($0)))" } ?? " (\(lines.unfinishedBytes) bytes without a newline)"
            return PushStream.End(reason: "the stream closed in the middle of a line\(how)", opened: isOpen)
        }
        return PushStream.End(reason: error.map(Self.describe) ?? "the server closed the stream", opened: isOpen)
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        guard head.status == .ok else { return fail("the server answered HTTP \(head.status.code) \(head.status.reasonPhrase)") }
        return loop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        do {
            for line in try lines.append(buffer.readableBytesView) {
                let event = try NtfyStreamEvent(line: line)
                if !isOpen {
                    isOpen = true
                    opened()
                }
                if event.event == "message" { try take(event) }
            }
        } catch let tooLong as StreamLines.LineTooLong {
            return fail("the server sent a line of more than \(StreamLines.maximumLineBytes) bytes (\(tooLong.bytes) so far)")
        } catch let unreadable as NtfyStreamEvent.Unreadable {
            return fail(unreadable.description)
        } catch let end as PushStream.End {
            return fail(end.reason)
        } catch {
            return fail("\(error)")
        }
        return loop.makeSucceededVoidFuture()
    }

    /// The task's future carries the error to ``PushStream``, which asks ``end(error:)``.
    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {}

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {}

    /// Ends the connection with `reason` (the failed future makes the client close it).
    private func fail(_ reason: String) -> EventLoopFuture<Void> {
        if self.reason == nil { self.reason = reason }
        return loop.makeFailedFuture(PushStream.End(reason: reason, opened: isOpen))
    }

    /// An error of the HTTP client as one line.
    static func describe(_ error: any Error) -> String {
        if let client = error as? HTTPClientError {
            switch client {
            case .readTimeout: return "nothing came for \(Int(ReconnectBackoff.idleSeconds)) s, not even a keepalive"
            case .remoteConnectionClosed: return "the server closed the connection"
            case .connectTimeout: return "cannot connect: timed out"
            default: return "\(client)"
            }
        }
        if let io = error as? IOError { return "network error: \(String(cString: strerror(io.errnoCode)))" }
        return "\(error)"
    }
}
