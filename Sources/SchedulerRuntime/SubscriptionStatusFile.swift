import FoundationEssentials
import Synchronization
import TaskState

/// `subscriptions/<app>.json`: what an app's subscribers know of their streams, the cursor
/// (`lastMessageID`) above all. The streams of one app share it; each change is written at once,
/// atomically and durably, under one lock, so two streams never write over each other.
final class SubscriptionStatusFile: Sendable {
    let app: Identifier
    private let path: String
    private let status: Mutex<SubscriptionStatus>

    /// Carries over what `kept` knew of the same URLs (the cursors of the last scheduler).
    init(app: Identifier, paths: StatePaths, kept: SubscriptionStatus?) {
        self.app = app
        path = paths.subscriptions(of: app)
        status = Mutex(SubscriptionStatus(app: app, streams: kept?.streams ?? []))
    }

    /// The file as the last scheduler left it: `nil` when there is none. A file that cannot be
    /// read is a problem for the caller to report (the start-up snapshot quarantines it).
    static func load(app: Identifier, paths: StatePaths) -> Result<SubscriptionStatus?, StateError> {
        let path = paths.subscriptions(of: app)
        guard StateFiles.exists(path) else { return .success(nil) }
        do {
            let status = try JSONFormat.decode(SubscriptionStatus.self, from: try StateFiles.read(path, maximumSize: 1 << 20))
            return .success(status.app == app ? status : nil)
        } catch {
            return .failure(error)
        }
    }

    /// What is known of the stream at `url`.
    func stream(_ url: String) -> SubscriptionStatus.Stream? {
        status.withLock { $0.streams.first { $0.url == url } }
    }

    /// Makes the file list exactly `urls`, in order, keeping what was known of each; writes it
    /// when that changes it (a reload of other manifests leaves it alone).
    func follow(urls: [String]) throws(StateError) {
        try status.withLock { (status: inout SubscriptionStatus) throws(StateError) in
            let known = Dictionary(status.streams.map { ($0.url, $0) }, uniquingKeysWith: { first, _ in first })
            let before = status.streams
            status.streams = urls.map { known[$0] ?? SubscriptionStatus.Stream(url: $0) }
            if status.streams != before || !StateFiles.exists(path) { try write(status) }
        }
    }

    /// Changes the stream at `url` and writes the file; a stream no longer listed is left alone
    /// (its subscriber is being stopped).
    func update(_ url: String, _ change: (inout SubscriptionStatus.Stream) -> Void) throws(StateError) {
        try status.withLock { (status: inout SubscriptionStatus) throws(StateError) in
            guard let index = status.streams.firstIndex(where: { $0.url == url }) else { return }
            change(&status.streams[index])
            try write(status)
        }
    }

    private func write(_ status: SubscriptionStatus) throws(StateError) {
        let data: Data
        do {
            data = try JSONFormat.encode(status)
        } catch {
            throw .malformed("cannot encode \(path): \(error)")
        }
        try StateFiles.write(data, to: path, durable: true)
    }
}
