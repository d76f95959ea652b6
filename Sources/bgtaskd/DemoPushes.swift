import Dispatch
import FoundationEssentials
import LoopbackServer

/// The demo's push server: a loopback ntfy server whose topic Stormy and the alerts app subscribe
/// to, and which publishes a storm warning every few seconds, so the push budget running out and
/// held pushes coalescing can be watched.
final class DemoPushes {
    static let topic = "storm-warnings"
    /// Often enough that the budget (3 an hour) runs out within a minute.
    static let interval: DispatchTimeInterval = .seconds(12)

    let server: PushTopicServer
    private let timer: DispatchSourceTimer
    private let queue = DispatchQueue(label: "bgtop demo pushes")

    private init(server: PushTopicServer) {
        self.server = server
        timer = DispatchSource.makeTimerSource(queue: queue)
    }

    static func start() throws -> DemoPushes {
        let server = try blockingAwait { try await PushTopicServer.start() }
        let pushes = DemoPushes(server: server)
        var count = 0
        pushes.timer.schedule(deadline: .now() + .seconds(3), repeating: interval)
        pushes.timer.setEventHandler {
            count += 1
            let region = ["north", "coast", "valley"][count % 3]
            // ntfy priority 4 and 5 become apns-priority 10; the rest 5 (which waits out low power).
            _ = server.publish(topic: topic, message: #"{"aps":{"content-available":1},"storm":{"region":"\#(region)"}}"#,
                               priority: count % 2 == 0 ? 3 : 4)
        }
        pushes.timer.resume()
        return pushes
    }

    /// The topic URL the demo's manifests subscribe to.
    var topicURL: String { server.url(of: Self.topic) }

    func stop() {
        timer.cancel()
        try? blockingAwait { [server] in await server.stop() }
    }
}
