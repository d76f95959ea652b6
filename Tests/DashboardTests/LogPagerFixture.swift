import Dashboard
import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// A real log file in a private state directory, and a shell that answers the pager's reads with
/// the real ``LogReader`` at once: the pure state is driven exactly as `bgtop` drives it.
final class LogPagerFixture {
    let paths: StatePaths
    let root: String

    init(app: String = "com.example.mail", text: String = LogPagerFixture.mailLog) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-pager-\(UUID().uuidString)").path
        paths = StatePaths(root: root)
        try FileManager.default.createDirectory(atPath: paths.logs, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: paths.appLog(Fixtures.id(app))))
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    func logPath(_ app: String = "com.example.mail") -> String { paths.appLog(Fixtures.id(app)) }

    func append(_ text: String, app: String = "com.example.mail") throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath(app)))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// Answers every read in `effects` (and the reads the answers lead to); returns the other effects.
    @discardableResult
    func answer(_ effects: [DashboardEffect], into state: inout DashboardState) -> [DashboardEffect] {
        var queue = effects
        var others: [DashboardEffect] = []
        while !queue.isEmpty {
            let effect = queue.removeFirst()
            guard case .readLog(let request) = effect else { others.append(effect); continue }
            queue += state.receiveLog(LogReader.read(request, paths: paths))
        }
        return others
    }

    /// Presses `keys` through `harness`, answering reads as they come.
    func press(_ keys: [Key], _ harness: inout KeyHarness) {
        for key in keys { answer(harness.press(key), into: &harness.state) }
    }

    /// `state` after pressing `keys` on `snapshot` at 80×24 with every read answered.
    static func state(pressing keys: [Key], on snapshot: DashboardSnapshot = Fixtures.busy, app: String = "com.example.mail",
                      text: String = mailLog, from start: DashboardState = DashboardState()) -> DashboardState {
        guard let fixture = try? LogPagerFixture(app: app, text: text) else { return start }
        var harness = KeyHarness(snapshot, state: start)
        fixture.press(keys, &harness)
        return harness.state
    }

    /// The mail app's log: an earlier launch, then the running one (`launch-31337`, the launch id
    /// of the fixtures' mail task), with what handlers print: errors, escapes, a long line.
    static let mailLog: String = {
        let time = Date(timeIntervalSince1970: 1_795_348_500)
        let earlier = LogMarker(launchID: "launch-30100", kinds: ["appRefresh"], identifiers: ["com.example.mail.refresh"], time: time)
        let running = LogMarker(launchID: "launch-31337", kinds: ["appRefresh"], identifiers: ["com.example.mail.fetch-now"],
                                time: time.addingTimeInterval(295))
        var text = earlier.line
        for index in 0..<30 { text += "fetch: mailbox \(index % 3 == 0 ? "INBOX" : "Archive") \(index): \(index * 7) new\n" }
        text += "error: imap.example.com: connection reset by peer\n"
        text += "completed com.example.mail.refresh (success)\n"
        text += running.line
        text += "fetch-now: connecting to imap.example.com:993\n"
        text += "\u{1B}[31mwarning\u{1B}[0m: certificate expires in 6 days\n"
        text += "headers: " + String(repeating: "X-Spam-Score: 0.1; ", count: 200) + "\n"
        text += "error: mailbox Archive: quota 98% full\n"
        text += "fetch-now: 12 new messages\tINBOX\n"
        return text
    }()
}
