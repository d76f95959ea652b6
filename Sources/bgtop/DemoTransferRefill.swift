import Foundation
import TaskState

/// Keeps the demo's transfers panel moving: whenever a download completes, the next podcast
/// episode starts downloading. It reacts to the state the dashboard has just read (inotify told
/// it a transfer record changed), so it costs nothing while nothing changes.
final class DemoTransferRefill {
    /// The route every follow-up download fetches: 30 MB at 2 MB/s, so its bar moves for 15 s.
    static let path = "/podcasts/next.mp3"
    static let app = try! Identifier(validating: "com.example.podcasts")

    private let inbox: Inbox
    private let url: String
    /// Completed downloads already followed by a new one.
    private var followed: Set<TaskKey> = []
    private var nextEpisode = 414

    init(inbox: Inbox, url: String) {
        self.inbox = inbox
        self.url = url
    }

    /// Starts one new download for each download that completed since the last call.
    func follow(_ transfers: [TransferRecord]) {
        let now = Date()
        for transfer in transfers.sorted(by: { $0.key < $1.key })
        where transfer.direction == .download && transfer.state == .completed && !followed.contains(transfer.key) {
            followed.insert(transfer.key)
            let episode = "episode-\(nextEpisode)"
            nextEpisode += 1
            let request = TransferRequest(app: Self.app, identifier: try! Identifier(validating: episode), session: "\(Self.app).background",
                                          direction: .download, url: url, destination: "\(episode).mp3")
            // A demo that cannot write its own inbox has lost its state directory: nothing to refill.
            try? inbox.enqueue(Command(issuedAt: now, action: .transferCreate(request)))
        }
    }
}
