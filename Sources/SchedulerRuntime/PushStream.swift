import AsyncHTTPClient
import Foundation
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
/// Runs on the subscribers' own threads, never the scheduler's loop: it writes the inbox (as
/// any client does) and `subscriptions/<app>.json`, and hands its events to the loop.
struct PushStream: Sendable {
    let app: Identifier
    let subscription: PushSubscription
    let client: HTTPClient
    let paths: StatePaths
    let statusFile: SubscriptionStatusFile
    /// Takes an event for the log; called from this stream's thread.
    let report: @Sendable (Event) -> Void

    private var url: String { subscription.ntfy }

    /// How a connection ended.
    struct End: Error {
        var reason: String
        /// The server had opened the stream: the connection was healthy until it ended.
        var opened: Bool
    }

    /// Keeps the stream open until the task is cancelled.
    func run() async {
        var cursor = statusFile.stream(url)?.lastMessageID
        var failures = statusFile.stream(url)?.failures ?? 0
        while !Task.isCancelled {
            updateStatus { $0.state = .connecting; $0.nextAttemptAt = nil }
            let end = await connect(cursor: &cursor, failures: &failures)
            if Task.isCancelled { break }
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
                         message: "\(app): push subscription \(url) \(what): \(end.reason); reconnecting in \(DurationText.compact(delay))"))
            try? await Task.sleep(for: .seconds(delay))
        }
    }

    /// One connection, from the request to the end of the stream.
    private func connect(cursor: inout String?, failures: inout Int) async -> End {
        var request = HTTPClientRequest(url: subscription.streamURL(since: cursor))
        request.headers.add(name: "Accept", value: "application/x-ndjson")
        if let file = subscription.authorizationFile {
            switch Self.authorization(from: file) {
            case .success(let value): request.headers.add(name: "Authorization", value: value)
            case .failure(let refusal): return refusal
            }
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, timeout: .seconds(30))
        } catch {
            return End(reason: Self.describe(error), opened: false)
        }
        guard response.status == .ok else {
            return End(reason: "the server answered HTTP \(response.status.code) \(response.status.reasonPhrase)", opened: false)
        }
        var lines = StreamLines()
        var opened = false
        do {
            for try await buffer in response.body {
                for line in try lines.append(buffer.readableBytesView) {
                    let event = try NtfyStreamEvent(line: line)
                    if !opened {
                        opened = true
                        failures = 0
                        connected(since: cursor)
                    }
                    if event.event == "message" { try take(event, cursor: &cursor) }
                }
            }
        } catch let tooLong as StreamLines.LineTooLong {
            return End(reason: "the server sent a line of more than \(StreamLines.maximumLineBytes) bytes (\(tooLong.bytes) so far)", opened: opened)
        } catch let unreadable as NtfyStreamEvent.Unreadable {
            return End(reason: unreadable.description, opened: opened)
        } catch let end as End {
            return End(reason: end.reason, opened: opened)
        } catch {
            if lines.unfinishedBytes > 0 {
                return End(reason: "the stream broke off in the middle of a line (\(Self.describe(error)))", opened: opened)
            }
            return End(reason: Self.describe(error), opened: opened)
        }
        if lines.unfinishedBytes > 0 {
            return End(reason: "the stream closed in the middle of a line (\(lines.unfinishedBytes) bytes without a newline)", opened: opened)
        }
        return End(reason: "the server closed the stream", opened: opened)
    }

    private func connected(since cursor: String?) {
        let now = Date()
        updateStatus { stream in
            stream.state = .connected
            stream.connectedAt = now
            stream.failures = 0
            stream.nextAttemptAt = nil
        }
        let resuming = cursor.map { " (since message \($0))" } ?? ""
        report(Event(time: now, type: .pushSubscription, app: app, reason: "connected",
                     message: "\(app): push subscription \(url) connected\(resuming)"))
    }

    /// A `message` event: a push made durable in the inbox, then the cursor moved past it; or an
    /// event saying why it is no push (and the cursor moved past it too, so it is not read again).
    private func take(_ event: NtfyStreamEvent, cursor: inout String?) throws(End) {
        let now = Date()
        switch event.push(for: app, source: url) {
        case .failure(let refusal):
            report(Event(time: now, type: .pushDropped, app: app, reason: "notAPush",
                         message: "\(app): \(refusal.description) (from \(url))"))
            // An id unfit for a cursor (empty, too long) is not kept: `since=` could not name it.
            if PushRequest(app: app, messageID: event.id).problem == nil { advance(&cursor, to: event.id, at: now) }
        case .success(let push):
            let command = Command(issuedAt: now, issuerPID: getpid(), action: .push(push))
            do {
                try Inbox(paths: paths).enqueue(command)
            } catch {
                throw End(reason: "cannot write message \(event.shownID) into the inbox: \(error.description)", opened: true)
            }
            advance(&cursor, to: event.id, at: now)
        }
    }

    private func advance(_ cursor: inout String?, to id: String, at now: Date) {
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
        guard !Task.isCancelled else { return }
        do {
            try statusFile.update(url, change)
        } catch {
            report(Event(time: Date(), type: .pushSubscription, app: app, reason: "statusNotWritten",
                         message: "\(app): cannot write the status of push subscription \(url): \(error.description)"))
        }
    }

    /// The `Authorization` value in `file`: one line, trimmed. The file must be the user's own
    /// and closed to others, like a manifest; its contents never appear in a message.
    static func authorization(from file: String) -> Result<String, End> {
        func refuse(_ why: String) -> Result<String, End> { .failure(End(reason: "authorizationFile \(file) \(why)", opened: false)) }
        let data: Data
        do {
            data = try StateFiles.read(file, maximumSize: 8 << 10, followingLinks: true, vetting: ConfigTrust.vetFile(file))
        } catch {
            return .failure(End(reason: "authorizationFile: \(error.description)", opened: false))
        }
        guard let text = String(data: data, encoding: .utf8) else { return refuse("is not UTF-8 text") }
        let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else { return refuse("is empty") }
        guard !value.contains(where: \.isNewline) else { return refuse("must hold one line, the Authorization header's value") }
        guard value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7f }) else {
            return refuse("holds characters an HTTP header cannot carry")
        }
        return .success(value)
    }

    /// An error of the HTTP client as one line.
    static func describe(_ error: any Error) -> String {
        if let client = error as? HTTPClientError {
            switch client {
            case .readTimeout: return "nothing came for \(Int(ReconnectBackoff.idleSeconds)) s, not even a keepalive"
            case .remoteConnectionClosed: return "the server closed the connection"
            case .connectTimeout: return "cannot connect: timed out"
            case .deadlineExceeded: return "the server did not answer in 30 s"
            default: return "\(client)"
            }
        }
        if let io = error as? IOError { return "network error: \(String(cString: strerror(io.errnoCode)))" }
        return "\(error)"
    }
}
