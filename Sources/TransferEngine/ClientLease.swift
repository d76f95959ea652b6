import AsyncHTTPClient
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
        client = HTTPClient(eventLoopGroup: group, configuration: configuration)
    }

    /// Shuts the client down, then stops the event-loop thread.
    func close() async {
        try? await client.shutdown()
        try? await group.shutdownGracefully()
    }
}
