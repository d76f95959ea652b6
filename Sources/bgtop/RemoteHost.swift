import Dashboard
import FoundationEssentials
import StateFeed
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// One machine of `bgtop --host`: an ssh running `bgctl watch --json` there, the state rebuilt
/// from its lines (``FeedReplica``), and the commands of keys sent back as request lines on the
/// same connection. A connection that ends (ssh's exit, seen through its pidfd, or the end of
/// the feed) is shown at once and tried again after a growing pause (1 s, doubling to 30 s).
final class RemoteHost {
    /// Commands waiting for their answer at once; beyond this a key is refused rather than queued.
    static let maximumOutstanding = 32
    /// Request bytes not yet taken by ssh; beyond this a key is refused.
    static let maximumUnsent = 256 * 1024
    static let firstRetry = 1.0
    static let longestRetry = 30.0

    let name: String
    private let launch: SSHLaunch
    private let environment: [String: String]
    private var process: SSHProcess?
    private(set) var connection: HostBadge.Connection = .connecting
    private var replica = FeedReplica()
    private var built: DashboardSnapshot?
    private var feed = BoundedLineReader(limit: WatchFeed.maximumFeedLine)
    private var complaints = BoundedLineReader(limit: 4096)
    /// ssh's last line on stderr: why a connection failed, in its words.
    private var lastComplaint: String?
    private var retryDelay = RemoteHost.firstRetry
    /// The pause before the attempt now waiting (``retryDelay`` is already the next one's).
    private var retryDelayShown = RemoteHost.firstRetry
    /// When to connect again (monotonic seconds), while lost.
    private var retryAt: Double?
    private var unsent = Data()
    private var outstanding: [String: String] = [:]
    private var nextRequest = 1
    private(set) var reports: [CommandDispatch.StatusReport] = []
    /// The log the pager follows here, sent again on each new connection.
    private var followedLog: Identifier?
    private var logExcerpts: [LogExcerpt] = []
    private var logChanged = false
    /// Log reads sent and not yet answered, by request id: each is answered, if not by the watch
    /// then here (with a problem) when it refuses the read or the connection ends, since the
    /// pager waits for its answer before it reads again.
    private var logReads: [String: LogRequest] = [:]

    init(launch: SSHLaunch, environment: [String: String]) {
        name = launch.host
        self.launch = launch
        self.environment = environment
        connect()
    }

    /// stdout, stderr, the pidfd, and stdin while requests wait to be written.
    var descriptors: [(descriptor: Int32, output: Bool)] {
        guard let process else { return [(-1, false), (-1, false), (-1, false), (-1, true)] }
        // A stderr at its end stays readable (hang-up): no longer watched, or poll would spin.
        return [(process.output, false), (complaints.ended ? -1 : process.errors, false), (process.pidDescriptor, false),
                (unsent.isEmpty ? -1 : process.input, true)]
    }

    /// Handles its ready descriptors (indices into ``descriptors``) and a due retry; returns
    /// whether what it shows changed.
    func service(ready: Set<Int>) -> Bool {
        var changed = false
        if let retryAt, MonotonicClock.now() >= retryAt {
            connect()
            changed = true
        }
        guard let process else { return changed }
        if ready.contains(1) {
            for case .text(let line) in complaints.read(from: process.errors) {
                let text = String(decoding: line, as: UTF8.self).trimmedWhitespace()
                if !text.isEmpty { lastComplaint = String(text.prefix(200)) }
            }
        }
        if ready.contains(0) {
            for line in feed.read(from: process.output) {
                guard case .text(let data) = line else {
                    lose("a feed line longer than \(WatchFeed.maximumFeedLine) bytes")
                    return true
                }
                do {
                    switch try replica.apply(line: data) {
                    case .result(let result)?: answer(result)
                    case .error(let error)?: answer(error)
                    case .log(let id, let excerpt)?:
                        if let id { logReads[id] = nil }
                        logExcerpts.append(excerpt)
                    case .logChanged(let app)?: if app == followedLog { logChanged = true }
                    case nil:
                        if case .connecting = connection, replica.hasSnapshot {
                            connection = .connected
                            retryDelay = Self.firstRetry
                            // What was written while there was no connection was told to no one.
                            if followedLog != nil { logChanged = true }
                        }
                        built = nil
                        changed = true
                    }
                } catch {
                    lose("\(error)")
                    return true
                }
            }
            if feed.ended {
                lose(nil)
                return true
            }
        }
        if ready.contains(2) {
            lose(nil)
            return true
        }
        if ready.contains(3) { flush() }
        return changed
    }

    /// Milliseconds until the next retry; -1 when none is waiting.
    func pollTimeout() -> Int32 {
        guard let retryAt else { return -1 }
        return Int32(max(0, min(((retryAt - MonotonicClock.now()) * 1000).rounded(.up), Double(Int32.max))))
    }

    /// What the screen shows for this host: the last state it sent (kept while the connection is
    /// down), or why there is none yet.
    func snapshot(now: Date) -> DashboardSnapshot {
        guard replica.hasSnapshot else {
            let problem: String
            switch connection {
            case .connecting, .connected: problem = "connecting to \(name) over ssh…"
            case .lost(let reason, _): problem = "cannot reach \(name): \(reason)"
            }
            return DashboardSnapshot(now: now, stateDirectory: "\(name):", problem: problem)
        }
        if built == nil {
            built = SnapshotReader.build(
                replica.snapshot, events: replica.events, history: replica.history, settings: replica.settings, catalog: replica.catalog,
                stateDirectory: "\(name):\(replica.stateDirectory)", schedulerPID: replica.schedulerPID,
                directoryProblem: replica.directoryProblem, now: now)
        }
        var snapshot = built!
        snapshot.now = now
        if case .lost(let reason, _) = connection {
            snapshot.problem = "connection to \(name) lost (\(reason)): showing what it last sent"
        }
        return snapshot
    }

    /// Sends the command as a request line; its answer becomes a report.
    func send(_ action: CommandAction, summary: String) {
        guard process != nil, case .connected = connection else {
            reports.append(.init(text: "\(summary): not sent, \(name) is not connected", isError: true))
            return
        }
        guard outstanding.count < Self.maximumOutstanding else {
            reports.append(.init(text: "\(summary): not sent, \(outstanding.count) commands to \(name) wait for an answer", isError: true))
            return
        }
        let id = "bgtop-\(nextRequest)"
        guard let line = Self.requestLine(action, id: id), unsent.count + line.count <= Self.maximumUnsent else {
            reports.append(.init(text: "\(summary): not sent, the connection to \(name) is not taking requests", isError: true))
            return
        }
        nextRequest += 1
        outstanding[id] = summary
        unsent.append(line)
        flush()
    }

    func takeReports() -> [CommandDispatch.StatusReport] {
        defer { reports.removeAll() }
        return reports
    }

    /// Asks the watch for a part of a log; the answer comes back as a `log` line. A read that
    /// cannot be sent is answered at once with nothing, so the pager does not wait.
    func readLog(_ request: LogRequest) {
        let fields = (try? JSONFormat.encodeLine(request)).flatMap(JSONValue.init(parsing:))
        let id = "log-\(nextRequest)"
        guard process != nil, case .connected = connection, let fields,
              queue(.object(["type": .string("log"), "id": .string(id), "request": fields])) else {
            unanswered(request, problem: "\(name) is not connected")
            return
        }
        nextRequest += 1
        logReads[id] = request
    }

    /// Answers a log read the watch will not answer, so the pager shows why and can read again.
    private func unanswered(_ request: LogRequest, problem: String) {
        logExcerpts.append(LogExcerpt(app: request.app, serial: request.serial, position: request.position, file: nil, fileSize: 0,
                                      lines: [], problem: problem))
    }

    /// Follows `app`'s log on the watched machine (`nil`: none).
    func followLog(_ app: Identifier?) {
        guard app != followedLog else { return }
        followedLog = app
        sendFollow()
    }

    func takeLogNews() -> (excerpts: [LogExcerpt], changed: Bool) {
        defer {
            logExcerpts.removeAll()
            logChanged = false
        }
        return (logExcerpts, logChanged)
    }

    private func sendFollow() {
        guard process != nil else { return }
        _ = queue(.object(["type": .string("follow"), "app": followedLog.map { .string($0.rawValue) } ?? .null]))
    }

    /// Queues one request line for ssh's stdin; false when it cannot be made or would overfill.
    private func queue(_ request: JSONValue) -> Bool {
        guard let line = try? JSONFormat.encodeLine(request), unsent.count + line.count <= Self.maximumUnsent else { return false }
        unsent.append(line)
        flush()
        return true
    }

    /// Ends ssh and reaps it.
    func close() {
        process?.end()
        process = nil
        retryAt = nil
    }

    /// `{"type":"command","id":...,"command":{...}}`: the inbox command's fields without those
    /// the watch fills in.
    static func requestLine(_ action: CommandAction, id: String) -> Data? {
        let command = Command(issuedAt: Date(), action: action)
        guard let encoded = try? JSONFormat.encodeLine(command), var fields = JSONValue(parsing: encoded)?.object else { return nil }
        for reserved in ["id", "issuedAt", "issuerPID", "launchToken", "format"] { fields[reserved] = nil }
        return try? JSONFormat.encodeLine(JSONValue.object(["type": .string("command"), "id": .string(id), "command": .object(fields)]))
    }

    private func connect() {
        retryAt = nil
        replicaReset()
        do {
            process = try SSHProcess(launch, environment: environment)
            connection = .connecting
            // A pager open across a reconnection keeps following.
            if followedLog != nil { sendFollow() }
        } catch {
            process = nil
            scheduleRetry(reason: error.description)
        }
    }

    /// A fresh connection starts from a fresh snapshot; what was shown stays until it comes.
    private func replicaReset() {
        feed = BoundedLineReader(limit: WatchFeed.maximumFeedLine)
        complaints = BoundedLineReader(limit: 4096)
        lastComplaint = nil
        unsent = Data()
    }

    /// The connection ended: reap ssh, say why, and plan the next attempt.
    private func lose(_ reason: String?) {
        guard let process else { return }
        // ssh's last words explain most failures; read what it wrote before it went.
        for case .text(let line) in complaints.read(from: process.errors) {
            let text = String(decoding: line, as: UTF8.self).trimmedWhitespace()
            if !text.isEmpty { lastComplaint = String(text.prefix(200)) }
        }
        let status = process.end()
        self.process = nil
        let why = reason ?? lastComplaint ?? status.map { "ssh exited with status \($0)" } ?? "the feed ended"
        for (_, summary) in outstanding.sorted(by: { $0.key < $1.key }) {
            reports.append(.init(text: "\(summary): no answer, the connection to \(name) ended", isError: true))
        }
        outstanding = [:]
        for (_, request) in logReads.sorted(by: { $0.key < $1.key }) {
            unanswered(request, problem: "the connection to \(name) ended (\(why)); reading again once it is back")
        }
        logReads = [:]
        scheduleRetry(reason: why)
        reports.append(.init(text: "\(name): connection lost (\(why)); retrying in \(Int(retryDelayShown)) s", isError: true))
    }

    private func scheduleRetry(reason: String) {
        retryDelayShown = retryDelay
        retryAt = MonotonicClock.now() + retryDelay
        connection = .lost(reason: reason, retryAt: Date().addingTimeInterval(retryDelay))
        retryDelay = min(Self.longestRetry, retryDelay * 2)
    }

    private func flush() {
        guard let process, !unsent.isEmpty else { return }
        let written = unsent.withUnsafeBytes { Glibc.write(process.input, $0.baseAddress, $0.count) }
        if written > 0 {
            unsent.removeFirst(written)
            unsent = Data(unsent)
        } else if written < 0 && errno != EAGAIN && errno != EINTR {
            // ssh's stdin is gone: its exit follows and is handled there.
            unsent = Data()
        }
    }

    private func answer(_ result: FeedResult) {
        let summary = result.id.flatMap { outstanding.removeValue(forKey: $0) } ?? "command"
        switch result.status {
        case .applied:
            reports.append(.init(text: result.message ?? "\(summary): done", isError: false))
        case .refused:
            let error = result.error.map { "\($0.name): \($0.message)" } ?? "refused"
            reports.append(.init(text: "\(summary): \(error)", isError: true))
        case .queued:
            reports.append(.init(text: "\(summary): queued; bgtaskd is not running on \(name)", isError: true))
        case .noAnswer:
            reports.append(.init(text: "\(summary): bgtaskd on \(name) did not answer", isError: true))
        }
    }

    private func answer(_ error: FeedError) {
        if let id = error.id, let request = logReads.removeValue(forKey: id) {
            unanswered(request, problem: "\(name): \(error.message)")
            return
        }
        let summary = error.id.flatMap { outstanding.removeValue(forKey: $0) } ?? "request"
        reports.append(.init(text: "\(summary): \(error.message)", isError: true))
    }
}
