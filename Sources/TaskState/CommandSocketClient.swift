import CLinuxSupport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The fast way to hand the running scheduler a command: one message on its command socket
/// (`control.sock`, `SOCK_SEQPACKET`), answered with the outcome once the command and its effects
/// are committed. No file, no fsync of the client's own, no inotify instance (a user has only
/// `fs.inotify.max_user_instances` of those, 128 by default, shared with every program).
///
/// What is not answered is not lost: ``CommandChannel`` then writes the command into the inbox,
/// and the scheduler applies a command id at most once (it keeps outcomes by id).
public enum CommandSocketClient {
    /// The largest command the scheduler takes, as for an inbox file.
    public static let maximumCommandBytes = 64 << 10
    /// The largest answer read; an outcome is a few hundred bytes. A longer one reads as no
    /// answer, and the outcome file (which is always written) is read instead.
    static let maximumAnswerBytes = 64 << 10

    /// What became of a command offered on the socket.
    public enum Answer: Sendable, Equatable {
        /// Committed; the outcome says whether it was applied or refused.
        case applied(CommandOutcome)
        /// No scheduler listens (no socket, not ours, refused): nothing was sent.
        case unreachable
        /// Sent, but the connection ended before an answer (the scheduler stopped or crashed):
        /// it may or may not have been committed.
        case interrupted
        /// Sent, and no answer within the time allowed: the scheduler may still apply it.
        case timedOut
    }

    /// Offers `command` to the scheduler listening in `paths` and waits up to `timeout` seconds.
    public static func send(_ command: Command, paths: StatePaths, timeout: TimeInterval) -> Answer {
        // One the scheduler would not take goes through the inbox, which says why.
        guard let data = encoded(command), let connection = connect(paths) else { return .unreachable }
        defer { close(connection) }
        guard offer(data, on: connection) == .sent else { return .unreachable }
        var buffer = [UInt8](repeating: 0, count: maximumAnswerBytes)
        switch receive(on: connection, into: &buffer, deadline: bg_monotonic_seconds() + max(0, timeout)) {
        case .outcome(let outcome) where outcome.command == command.id: return .applied(outcome)
        case .outcome, .ended: return .interrupted
        case .timedOut: return .timedOut
        }
    }

    /// The command as one message, or `nil` when the scheduler would not take it.
    static func encoded(_ command: Command) -> Data? {
        guard let data = try? JSONFormat.encode(command), data.count <= maximumCommandBytes else { return nil }
        return data
    }

    /// A connection to the scheduler's socket (non-blocking), or `nil` when none of ours listens.
    static func connect(_ paths: StatePaths) -> Int32? {
        // Only a socket of our own: a file of another kind, or another user's, is not the scheduler.
        var status = stat()
        guard lstat(paths.controlSocket, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK,
              status.st_uid == geteuid() else { return nil }
        let connection = bg_seqpacket_connect(paths.controlSocket)
        guard connection >= 0 else { return nil }
        // The listener is the scheduler only if it runs as us (a socket file can be replaced).
        guard bg_peer_uid(connection) == Int64(geteuid()) else {
            close(connection)
            return nil
        }
        return connection
    }

    enum Offer { case sent, full, failed }

    /// Sends one command message without waiting: `full` when the socket has no room now.
    static func offer(_ data: Data, on connection: Int32) -> Offer {
        while true {
            let sent = data.withUnsafeBytes { bg_send_message(connection, $0.baseAddress, $0.count) }
            if sent == data.count { return .sent }
            if sent < 0 && errno == EINTR { continue }
            return sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? .full : .failed
        }
    }

    enum Received { case outcome(CommandOutcome), ended, timedOut }

    /// Waits until `deadline` (monotonic seconds) for one answer on `connection`.
    static func receive(on connection: Int32, into buffer: inout [UInt8], deadline: Double) -> Received {
        while true {
            let remaining = deadline - bg_monotonic_seconds()
            guard remaining > 0 else { return .timedOut }
            var descriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000 + 1, Double(Int32.max))))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { return ready == 0 ? .timedOut : .ended }
            let count = buffer.withUnsafeMutableBytes { bg_recv_message(connection, $0.baseAddress, $0.count) }
            if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            guard count > 0, count <= buffer.count,
                  let outcome = try? JSONFormat.decode(CommandOutcome.self, from: Data(buffer[0..<count])) else { return .ended }
            return .outcome(outcome)
        }
    }
}
