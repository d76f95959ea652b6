import TaskState

/// The log pager's state: a window of an app's log (at most ``capacity`` lines, never the whole
/// file), where the view is in it, and the search. Pure: it asks for parts of the log with
/// ``DashboardEffect/readLog(_:)`` and is given the answers with ``DashboardState/receiveLog(_:)``,
/// whenever they come and from wherever (a local file, or another host).
public struct LogPager: Sendable, Hashable {
    /// The most lines held; reading more drops lines from the far end of the window.
    public static let capacity = 2000
    /// Lines asked for at a time.
    public static let chunkLines = 400

    public let app: Identifier
    /// What the pager was opened on, for its title (`launch com.example.news-1795342296010`).
    public let subject: String
    /// Consecutive lines of the log, oldest first.
    public internal(set) var lines: [LogLine] = []
    /// The first line shown, while not following.
    public internal(set) var top = 0
    /// Keeps the view at the end of the log, showing new output as it is written.
    public internal(set) var follow: Bool
    /// The log file read last, and its size then.
    public internal(set) var file: FileIdentity?
    public internal(set) var fileSize: Int64 = 0
    /// The line a search or a launch found, highlighted.
    public internal(set) var match: Int64?
    /// The last search.
    public internal(set) var search = ""
    /// The search being typed, while it is.
    public internal(set) var searchDraft: String?
    /// A note under the log (`no match for "x" above`), or why it cannot be read.
    public internal(set) var message: String?
    public internal(set) var problem: String?
    /// Lines on screen at the last key: where a found line is placed.
    var pageRows = 20
    /// The serial of the request whose answer is awaited; answers to any other are dropped.
    var awaited: Int?
    var serial = 0
    /// The log changed while an answer was awaited: read what was appended once it comes.
    var changedWhileAwaiting = false
    /// Where the next search continues when the last one stopped at its scan limit.
    var searchResume: SearchResume?

    struct SearchResume: Sendable, Hashable {
        var offset: Int64
        var backwards: Bool
    }

    init(app: Identifier, subject: String, follow: Bool) {
        self.app = app
        self.subject = subject
        self.follow = follow
    }

    /// Whether the window holds the log's last line.
    public var reachesEnd: Bool { (lines.last?.end ?? 0) >= fileSize }
    /// Whether the window holds the log's first line.
    public var reachesStart: Bool { (lines.first?.offset ?? 0) == 0 }
    /// Where reading on after the window starts: the last line again when it was unfinished.
    var resumeOffset: Int64 {
        guard let last = lines.last else { return 0 }
        return last.complete ? last.end : last.offset
    }

    /// The first line shown when `rows` lines fit.
    public func firstVisible(rows: Int) -> Int {
        let bottom = max(0, lines.count - rows)
        return follow ? bottom : min(max(0, top), bottom)
    }

    /// A request for `position`, now the awaited one.
    mutating func ask(_ position: LogRequest.Position) -> DashboardEffect {
        serial += 1
        awaited = serial
        changedWhileAwaiting = false
        return .readLog(LogRequest(app: app, position: position, maximumLines: Self.chunkLines, serial: serial))
    }

    /// The log file changed (inotify said so): read what was appended, if the window shows the end.
    mutating func logChanged() -> [DashboardEffect] {
        if awaited != nil {
            changedWhileAwaiting = true
            return []
        }
        if lines.isEmpty || problem != nil { return [ask(.end)] }
        return reachesEnd || follow ? [ask(.after(offset: resumeOffset))] : []
    }

    /// Places an answer in the window; returns the next question, if one follows from it.
    mutating func receive(_ excerpt: LogExcerpt) -> [DashboardEffect] {
        guard excerpt.serial == awaited, excerpt.app == app else { return [] }
        awaited = nil
        let changed = changedWhileAwaiting
        changedWhileAwaiting = false
        if let problem = excerpt.problem {
            self.problem = problem
            lines = []
            file = nil
            fileSize = 0
            return []
        }
        problem = nil
        // The log was replaced (rotated) or cut shorter: what the window holds is no longer in it.
        let replaced = file != nil && (excerpt.file != file || excerpt.fileSize < fileSize)
        file = excerpt.file
        fileSize = excerpt.fileSize
        switch excerpt.position {
        case .after where replaced:
            message = "the log was truncated or replaced; reading it again from its end"
            lines = []
            follow = true
            return [ask(.end)]
        case .before where replaced:
            message = "the log was truncated or replaced; reading it again from its end"
            lines = []
            return [ask(.end)]
        case .after(let offset) where offset == resumeOffset && !lines.isEmpty:
            append(excerpt.lines, from: offset)
        case .before(let offset) where offset == lines.first?.offset:
            prepend(excerpt.lines)
        case .after, .before, .end:
            replace(with: excerpt.lines, top: 0)
        case .launch:
            if let found = excerpt.match {
                replace(with: excerpt.lines, top: excerpt.lines.firstIndex { $0.offset == found } ?? 0)
                match = found
                // A launch whose output fits on screen is followed: it may still be writing.
                follow = reachesEnd && top + pageRows >= lines.count
            } else {
                replace(with: excerpt.lines, top: 0)
                follow = true
                message = "no marker line for this launch in the log (looked back to byte \(excerpt.searchedTo ?? 0)); showing its end"
            }
        case .search(let text, _, let backwards):
            if let found = excerpt.match {
                replace(with: excerpt.lines, top: max(0, (excerpt.lines.firstIndex { $0.offset == found } ?? 0) - pageRows / 3))
                match = found
                follow = false
                message = nil
                searchResume = nil
            } else if let searchedTo = excerpt.searchedTo, backwards ? searchedTo > 0 : searchedTo < fileSize {
                searchResume = SearchResume(offset: searchedTo, backwards: backwards)
                message = "no match for \"\(text)\" in the \(LogReader.scanLimit >> 20) MiB \(backwards ? "above" : "below"); \(backwards ? "n" : "N") looks further"
            } else {
                searchResume = nil
                message = "no match for \"\(text)\" \(backwards ? "above" : "below")"
            }
        }
        if follow && !reachesEnd { return [ask(.end)] }
        if changed && reachesEnd { return [ask(.after(offset: resumeOffset))] }
        return []
    }

    private mutating func replace(with new: [LogLine], top: Int) {
        lines = new
        self.top = top
        match = nil
    }

    /// Appends lines read from `offset` on, replacing an unfinished last line; drops the oldest
    /// lines past ``capacity``.
    private mutating func append(_ new: [LogLine], from offset: Int64) {
        if let index = lines.firstIndex(where: { $0.offset >= offset }) { lines.removeSubrange(index...) }
        lines += new
        let excess = lines.count - Self.capacity
        if excess > 0 {
            lines.removeFirst(excess)
            top = max(0, top - excess)
        }
    }

    /// Puts earlier lines above the window, keeping the view on the same lines; drops the newest
    /// lines past ``capacity`` (the window then no longer reaches the end).
    private mutating func prepend(_ new: [LogLine]) {
        lines = new + lines
        top += new.count
        if lines.count > Self.capacity { lines.removeLast(lines.count - Self.capacity) }
    }
}
