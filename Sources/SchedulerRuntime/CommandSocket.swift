import CLinuxSupport
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The scheduler's end of the command socket (`control.sock`, see ``CommandSocketClient``):
/// clients' commands arrive as messages, are applied in the turn with the inbox's, and each is
/// answered with its outcome once the commit that holds it is durable.
///
/// Everything is non-blocking and driven by the loop's `poll`. A client that sends nonsense gets an
/// `invalidCommand` outcome when its message names a command id, else its connection is closed;
/// a peer of another user is never served.
final class CommandSocket {
    /// One client connection. A class, so an answer never goes to a later connection that was
    /// given the same descriptor number.
    final class Connection {
        let descriptor: Int32
        var isOpen = true
        init(descriptor: Int32) { self.descriptor = descriptor }
    }

    /// A message taken from a connection.
    enum Message {
        case command(Command, from: Connection)
        /// Not a command the scheduler takes; the reason, and the id it named when it had one.
        case malformed(reason: String, commandID: String?, from: Connection)
    }

    /// Connections served at once at most; more wait in the listen backlog until some end (and a
    /// client finding the backlog full uses the inbox at once).
    static let maximumConnections = 900
    static let backlog: Int32 = 512
    /// Descriptors kept for everything else the scheduler opens (state files, transfers, pidfds).
    static let reservedDescriptors = 256

    private let path: String
    private var listener: Int32
    private var connections: [Int32: Connection] = [:]
    /// Commands applied and not yet answered, by command id (a client that sent an id again
    /// waits beside the first).
    private var waiting: [String: [Connection]] = [:]
    /// Connections served at once: ``maximumConnections``, or fewer when the process may not
    /// open that many descriptors beside its own.
    private let connectionLimit: Int
    /// Out of descriptors (`EMFILE`, `ENFILE`): the listener is not watched until a connection
    /// ends, so a full table cannot spin the loop.
    private var acceptPaused = false
    /// One message's room, kept: reads happen at every wake a client sends.
    private var buffer = [UInt8](repeating: 0, count: CommandSocketClient.maximumCommandBytes)
    /// The socket file's identity, so that only ours is removed at the end.
    private let inode: (device: UInt64, inode: UInt64)

    /// Listens at `path`. A socket left by a scheduler that did not stop cleanly is replaced (the
    /// caller holds the state lock: no other scheduler can be using it); anything else there is
    /// left alone and throws.
    init(path: String) throws(StateError) {
        self.path = path
        var status = stat()
        if lstat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFSOCK else {
                throw .malformed("\(path) is not a socket; commands come through the inbox only")
            }
            unlink(path)
        }
        listener = bg_seqpacket_listen(path, Self.backlog)
        guard listener >= 0 else { throw .system(operation: "cannot listen on", path: path, errno: errno) }
        guard lstat(path, &status) == 0 else {
            let saved = errno
            close(listener)
            throw .system(operation: "cannot inspect", path: path, errno: saved)
        }
        inode = (UInt64(status.st_dev), UInt64(status.st_ino))
        let openFiles = bg_open_files_limit()
        connectionLimit = openFiles < 0 ? 64 : Int(max(16, min(Int64(Self.maximumConnections), openFiles - Int64(Self.reservedDescriptors))))
    }

    deinit { stop() }

    /// The descriptors `poll` watches: the listener while there is room, and every connection.
    var descriptors: [Int32] {
        var list = connections.count < connectionLimit && listener >= 0 && !acceptPaused ? [listener] : []
        list.append(contentsOf: connections.keys)
        return list
    }

    /// Messages taken from one connection per wake, and from all of them: a client that floods
    /// its connection neither holds the loop nor fills memory. `poll` is level-triggered, so what
    /// is left is taken at the next wake.
    static let messagesPerConnection = 16
    static let messagesPerWake = 1024

    /// Accepts what waits and reads the messages the ready descriptors hold (up to the limits).
    func receive(ready: [Int32]) -> [Message] {
        var messages: [Message] = []
        for descriptor in ready where messages.count < Self.messagesPerWake {
            if descriptor == listener {
                // A client sends as soon as it is connected: its command is read in this wake.
                for connection in acceptAll() where messages.count < Self.messagesPerWake {
                    read(connection, into: &messages)
                }
            } else if let connection = connections[descriptor] {
                read(connection, into: &messages)
            }
        }
        return messages
    }

    /// Remembers that `command`'s outcome goes to `connection` once committed.
    func await(_ command: String, on connection: Connection) {
        waiting[command, default: []].append(connection)
    }

    /// Sends each committed outcome (its command id, and the outcome as its file holds it) to the
    /// connections waiting for it.
    func answer(_ outcomes: [(command: String, message: Data)]) {
        guard !waiting.isEmpty else { return }
        for (command, message) in outcomes {
            guard let waiters = waiting.removeValue(forKey: command) else { continue }
            for connection in waiters { send(message, on: connection) }
        }
    }

    /// Answers `outcome` at once (a command committed earlier, or refused before it was applied).
    func answerNow(_ outcome: CommandOutcome, on connection: Connection) {
        send(outcome.fileContents(), on: connection)
    }

    /// Sends one answer without waiting. One that cannot go at once (a client that never reads,
    /// a peer gone) ends the connection: the client then reads the outcome file by its id.
    private func send(_ data: Data, on connection: Connection) {
        guard connection.isOpen else { return }
        let sent = data.withUnsafeBytes { bg_send_message(connection.descriptor, $0.baseAddress, $0.count) }
        if sent != data.count { end(connection) }
    }

    /// Closes everything and removes the socket file, if it is still ours.
    func stop() {
        for connection in connections.values { end(connection) }
        guard listener >= 0 else { return }
        close(listener)
        listener = -1
        var status = stat()
        if lstat(path, &status) == 0, UInt64(status.st_dev) == inode.device, UInt64(status.st_ino) == inode.inode {
            unlink(path)
        }
    }

    /// Accepts every waiting client (up to the limit) and returns the new connections.
    private func acceptAll() -> [Connection] {
        var accepted: [Connection] = []
        while connections.count < connectionLimit {
            let descriptor = bg_seqpacket_accept(listener)
            if descriptor < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM { acceptPaused = true }
                return accepted
            }
            guard bg_peer_uid(descriptor) == Int64(geteuid()) else {
                close(descriptor)
                continue
            }
            let connection = Connection(descriptor: descriptor)
            connections[descriptor] = connection
            accepted.append(connection)
        }
        return accepted
    }

    private func read(_ connection: Connection, into messages: inout [Message]) {
        // A client that went away (gave up, or was killed) no longer waits: what it sent was never
        // acknowledged, and one that gave up has written it into the inbox. Applying it now could
        // apply it twice, once its inbox copy's outcome has expired.
        if bg_peer_hung_up(connection.descriptor) != 0 {
            end(connection)
            return
        }
        var taken = 0
        while connection.isOpen && taken < Self.messagesPerConnection && messages.count < Self.messagesPerWake {
            taken += 1
            let count = buffer.withUnsafeMutableBytes { bg_recv_message(connection.descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno != EAGAIN && errno != EWOULDBLOCK { end(connection) }
                return
            }
            if count == 0 {
                end(connection)
                return
            }
            guard count <= buffer.count else {
                messages.append(.malformed(reason: "the command is \(count) bytes, more than the \(buffer.count) taken",
                                           commandID: nil, from: connection))
                continue
            }
            let data = Data(buffer[0..<count])
            do {
                let command = try JSONFormat.decode(Command.self, from: data)
                guard Command.isValidID(command.id) else {
                    messages.append(.malformed(reason: "command id '\(command.id)' is not valid", commandID: nil, from: connection))
                    continue
                }
                messages.append(.command(command, from: connection))
            } catch {
                messages.append(.malformed(reason: "\(error)", commandID: Self.commandID(in: data), from: connection))
            }
        }
    }

    /// The id a malformed command names, when it names a valid one (so its sender learns why).
    private static func commandID(in data: Data) -> String? {
        struct Named: Decodable { var id: String }
        guard let named = try? JSONFormat.decode(Named.self, from: data), Command.isValidID(named.id) else { return nil }
        return named.id
    }

    /// Closes a connection (its client then reads its outcome file, or uses the inbox).
    func end(_ connection: Connection) {
        guard connection.isOpen else { return }
        connection.isOpen = false
        connections[connection.descriptor] = nil
        close(connection.descriptor)
        acceptPaused = false
    }
}
