import FoundationEssentials
import TaskState

/// Keeps the demo's transfers panel moving: when a download completes, the next podcast episode
/// starts downloading, one at a time, always into the same file. It reacts to the state the
/// dashboard has just read (inotify told it a transfer record changed), so it costs nothing while
/// nothing changes, and however long the demo runs it holds one 30 MB file and a set of keys no
/// larger than the transfers on disk.
final class DemoTransferRefill {
    static let app = try! Identifier(validating: "com.example.podcasts")
    /// Every follow-up overwrites this file (the final move is a rename over it).
    static let destination = "next-episode.mp3"

    private let inbox: Inbox
    private let url: String
    /// Completed downloads already seen; a key is dropped once its record is gone.
    private var followed: Set<TaskKey> = []
    /// The follow-up sent last, until its record shows it ended: no second one starts meanwhile.
    private var current: TaskKey?
    private var nextEpisode = 414

    init(inbox: Inbox, url: String) {
        self.inbox = inbox
        self.url = url
    }

    /// Starts one new download when a download completed since the last call and no follow-up
    /// is under way.
    func follow(_ transfers: [TransferRecord]) {
        followed.formIntersection(transfers.map(\.key))
        let completed = transfers.filter { $0.direction == .download && $0.state == .completed && !followed.contains($0.key) }
        guard !completed.isEmpty else { return }
        followed.formUnion(completed.map(\.key))
        if let current {
            // Not yet read back (still in the inbox), or still moving: it is the one follow-up.
            guard let record = transfers.first(where: { $0.key == current }), !record.state.isActive else { return }
        }
        let episode = try! Identifier(validating: "episode-\(nextEpisode)")
        nextEpisode += 1
        let request = TransferRequest(app: Self.app, identifier: episode, session: "\(Self.app).background",
                                      direction: .download, url: url, destination: Self.destination)
        do {
            try inbox.enqueue(Command(issuedAt: Date(), action: .transferCreate(request)))
            current = TaskKey(app: Self.app, identifier: episode)
        } catch {
            // A demo that cannot write its own inbox has lost its state directory: nothing to refill.
            current = nil
        }
    }
}
