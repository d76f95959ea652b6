import CLinuxSupport
import Foundation
import Synchronization
import TaskState
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A listener on `control.sock` that takes a client's commands and goes away without a word, as
/// a scheduler killed with them in hand (between reading them and committing them).
struct VanishingScheduler {
    /// Runs `client` on a thread of its own, takes `messages` commands from its connection, then
    /// closes the connection and removes the socket; returns what `client` returned.
    static func take<Result: Sendable>(_ messages: Int, in env: TestEnvironment,
                                       from client: @escaping @Sendable () -> Result) throws -> Result {
        try StateFiles.ensureDirectory(env.paths.root)
        let listener = bg_seqpacket_listen(env.paths.controlSocket, 4)
        guard listener >= 0 else { throw StateError.system(operation: "cannot listen", path: env.paths.controlSocket, errno: errno) }
        defer { close(listener) }
        let result = Mutex<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let value = client()
            result.withLock { $0 = value }
            done.signal()
        }.start()
        var connection: Int32 = -1
        try env.waitUntil("the client to connect") {
            connection = bg_seqpacket_accept(listener)
            return connection >= 0
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var read = 0
        try env.waitUntil("\(messages) command(s) to arrive") {
            if buffer.withUnsafeMutableBytes({ bg_recv_message(connection, $0.baseAddress, $0.count) }) > 0 { read += 1 }
            return read == messages
        }
        close(connection)
        unlink(env.paths.controlSocket)
        done.wait()
        return result.withLock { $0! }
    }
}
