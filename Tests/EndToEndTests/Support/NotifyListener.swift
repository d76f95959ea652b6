import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// The service manager's end of sd_notify(3): an AF_UNIX datagram socket the test binds, whose
/// name is given to `bgtaskd` as `NOTIFY_SOCKET`, and the messages it received.
final class NotifyListener {
    /// The value for `NOTIFY_SOCKET`: a path, or `@name` for an abstract socket.
    let name: String
    private let descriptor: Int32
    private let path: String?
    /// Every message received so far, in order.
    private(set) var messages: [String] = []

    /// Listens on a socket file at `path`.
    convenience init(path: String) throws {
        try self.init(name: path, bytes: Array(path.utf8) + [0], path: path)
    }

    /// Listens on the abstract socket `@abstractName`.
    convenience init(abstractName: String) throws {
        try self.init(name: "@" + abstractName, bytes: [0] + Array(abstractName.utf8), path: nil)
    }

    private init(name: String, bytes: [UInt8], path: String?) throws {
        self.name = name
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (index, byte) in bytes.enumerated() { sunPath[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0 else {
            close(descriptor)
            throw TestFailure("bind \(name): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
        if let path { unlink(path) }
    }

    /// Where ``next(_:timeout:where:)`` looks from: messages before it have been passed.
    private var cursor = 0

    /// The first message after the last one returned that satisfies `condition`, receiving until
    /// it comes. A hang guard, not a timed assertion: nothing arriving within `timeout` seconds
    /// fails the test with what did arrive.
    @discardableResult
    func next(_ what: String, timeout: TimeInterval = 20, where condition: (String) -> Bool) throws -> String {
        if let index = messages[cursor...].firstIndex(where: condition) {
            cursor = index + 1
            return messages[index]
        }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let message = receive(waitingMilliseconds: 100) {
                messages.append(message)
                if condition(message) {
                    cursor = messages.count
                    return message
                }
            }
        }
        throw TestFailure("no \(what) on \(name) within \(timeout) s; received: \(messages)")
    }

    /// Takes whatever is queued now, without waiting.
    func drain() {
        while let message = receive(waitingMilliseconds: 0) { messages.append(message) }
    }

    private func receive(waitingMilliseconds: Int32) -> String? {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, waitingMilliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
