import AsyncHTTPClient
import Dispatch
import NIOCore
import NIOPosix

/// The HTTP client and its one event-loop thread, alive only while transfers run, so an idle
/// daemon has no extra thread at all.
final class ClientLease: Sendable {
    let client: HTTPClient
    private let group: MultiThreadedEventLoopGroup

    init(connectTimeout: Double) {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        var configuration = HTTPClient.Configuration(
            // Redirects are followed by the attempts, by RedirectTrail's rules (uploads re-send bodies).
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(connectTimeout * 1000))),
            decompression: .disabled)
        // Each transfer is one long stream; idle pooled connections are not worth keeping.
        configuration.connectionPool = .init(idleTimeout: .seconds(5))
        // A failed connect fails the request at once, as the kernel reported it: a refused or
        // unreachable host is known in milliseconds, and the scheduler owns retries (with its
        // backoff and `retryAt`). With the pool's own retries, a refusal was retried quietly
        // until the connect timeout, so it looked like a silent host. A silent host still waits
        // for the connect timeout, which bounds each connection attempt.
        configuration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    /// Shuts the client down, then stops the event-loop thread.
    ///
    /// The completion callbacks run on a serial queue: the async `shutdown()`s call back on
    /// Dispatch's global concurrent queue, whose first job starts libdispatch's once-a-second
    /// worker monitor for the rest of the daemon's life (see ``TimerSleep``).
    func close() async {
        let client = client
        let group = group
        let queue = Self.callbacks
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            client.shutdown(queue: queue) { _ in continuation.resume() }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.shutdownGracefully(queue: queue) { _ in continuation.resume() }
        }
    }

    private static let callbacks = DispatchQueue(label: "TransferEngine.shutdown")
}
