import FoundationEssentials
import LoopbackServer
import TaskState

/// The demo's background transfers, against an HTTP server on loopback that `bgtaskd --demo` runs:
/// a podcast episode slowed so its bar visibly moves, map tiles whose connection drops a third of
/// the way and resume with `Range`, a quick news feed, a photo upload, and a discretionary
/// download that waits for external power; after them, a new episode whenever a download completes
/// (bgtop's `DemoTransferRefill` sends those, from ``refillURL``).
struct DemoTransfers {
    let server: LoopbackServer

    /// The route every follow-up download fetches: 30 MB at 2 MB/s, so its bar moves for 15 s.
    static let refillPath = "/podcasts/next.mp3"

    static let apps = ["com.example.podcasts", "com.example.maps", "com.example.news", "com.example.photos"]

    /// Starts the server with the demo's routes and writes the upload's source file.
    static func start(root: String) throws -> DemoTransfers {
        let routes: [String: Route] = [
            "/podcasts/episode-412.mp3": Route(.generated(size: 48_000_000, seed: 412), faults: Faults(bytesPerSecond: 2_000_000)),
            "/podcasts/episode-413.mp3": Route(.generated(size: 52_000_000, seed: 413), faults: Faults(bytesPerSecond: 2_000_000)),
            "/maps/region-7.pack": Route(.generated(size: 64_000_000, seed: 7), faults: Faults(bytesPerSecond: 3_000_000),
                                         nextRequests: [Faults(bytesPerSecond: 3_000_000, dropAfter: 21_000_000)]),
            "/news/feed.json": Route(.generated(size: 180_000, seed: 1)),
            refillPath: Route(.generated(size: 30_000_000, seed: 414), faults: Faults(bytesPerSecond: 2_000_000)),
            "/weather.json": Route(.file(root + "/weather.json")),
        ]
        try Data(#"{"condition": "storm"}"#.utf8).write(to: URL(fileURLWithPath: root + "/weather.json"))
        let photo = root + "/IMG_2041.heic"
        try Data((0..<6_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: photo))
        let server = try blockingAwait { try await LoopbackServer.start(routes: routes) }
        return DemoTransfers(server: server)
    }

    /// The transfers the demo starts with.
    func initialCommands(root: String, now: Date) -> [Command] {
        func id(_ text: String) -> Identifier { try! Identifier(validating: text) }
        func create(_ app: String, _ identifier: String, _ direction: TransferRecord.Direction, _ path: String,
                    destination: String? = nil, source: String? = nil, discretionary: Bool = false) -> Command {
            let request = TransferRequest(app: id(app), identifier: id(identifier), session: "\(app).background",
                                          direction: direction, url: server.url(path), destination: destination,
                                          sourceFile: source, isDiscretionary: discretionary)
            return Command(id: Command.newID(at: now.addingTimeInterval(Double(identifier.count) / 1000 + 0.5)),
                           issuedAt: now, action: .transferCreate(request))
        }
        return [
            create("com.example.podcasts", "episode-412", .download, "/podcasts/episode-412.mp3", destination: "episode-412.mp3"),
            create("com.example.maps", "tiles-region-7", .download, "/maps/region-7.pack", destination: "region-7.pack"),
            create("com.example.news", "feed", .download, "/news/feed.json", destination: "feed.json"),
            create("com.example.photos", "upload-IMG_2041", .upload, "/upload/IMG_2041.heic", source: root + "/IMG_2041.heic"),
            create("com.example.podcasts", "episode-413", .download, "/podcasts/episode-413.mp3",
                   destination: "episode-413.mp3", discretionary: true),
        ]
    }

    var weatherURL: String { server.url("/weather.json") }

    /// Where the downloads that follow completed ones come from.
    var refillURL: String { server.url(Self.refillPath) }

    func stop() {
        try? blockingAwait { await server.shutdown() }
    }
}
