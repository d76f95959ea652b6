import ArgumentParser
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgctl logs APP [--lines N] [--follow]`: what an app's launched processes wrote, with the
/// launch each part came from marked, across rotated files.
struct Logs: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logs",
        abstract: "Show an app's output (logs/APP.log and its rotated files), each launch marked.",
        discussion: """
            Each launch's output starts with a line naming it: '── launch ID · KIND IDENTIFIER · TIME ──'. \
            When the first line shown is in the middle of a launch's output, that launch is named first, \
            with '(continued)'. Control characters in the output are shown escaped (^[ for ESC).
            """)

    @OptionGroup var locations: LocationOptions
    @Argument(help: "The app's identifier.") var app: String
    @Option(help: "How many of the last lines to show, 0 to 5000 (default 50).") var lines: String?
    @Flag(help: "Keep showing output as it is written, across rotations, until interrupted.") var follow = false

    func run() throws {
        let app = try identifier(app, "app")
        let count = Int(try lines.map { try NumberArgument.whole($0, option: "--lines", in: 0...5000, unit: " of lines") } ?? 50)
        var follower = LogFollower(paths: locations.paths, app: app)
        let found = follower.printTail(lines: count)
        if let problem = follower.problem, !(follow && !found) {
            printError(problem)
            throw BGCtl.Exit.refused
        }
        if follow { try follower.follow() }
    }
}

/// Prints an app's log: the last lines, then what is appended, noticing a rotation by the file's
/// identity changing.
struct LogFollower {
    let paths: StatePaths
    let app: Identifier
    /// Why the log could not be read, when it could not.
    private(set) var problem: String?
    /// The file being followed and where its next unread line starts.
    private var file: FileIdentity?
    private var offset: Int64 = 0

    init(paths: StatePaths, app: Identifier) {
        self.paths = paths
        self.app = app
    }

    /// Prints the last `lines` lines (from rotated files too when the current one has fewer);
    /// `false` when there is no log to read.
    mutating func printTail(lines count: Int) -> Bool {
        let current = LogReader.read(LogRequest(app: app, position: .end, maximumLines: max(count, 1)), paths: paths)
        guard current.problem == nil else {
            problem = current.problem
            return false
        }
        file = current.file
        offset = current.lines.last(where: \.complete)?.end ?? current.lines.first?.offset ?? 0
        guard count > 0 else {
            offset = current.fileSize
            return true
        }
        var parts: [(path: String, lines: [LogLine])] = [(paths.appLog(app), current.lines.filter(\.complete))]
        var missing = count - parts[0].lines.count
        var n = 1
        // Older output, newest rotated file first, while lines are wanted and files are there.
        while missing > 0 && n <= 1000 {
            let path = paths.rotatedAppLog(app, n)
            let older = LogReader.read(LogRequest(app: app, position: .end, maximumLines: missing), path: path)
            guard older.problem == nil else { break }
            parts.insert((path, older.lines), at: 0)
            missing -= older.lines.count
            n += 1
        }
        var shown = parts.flatMap { part in part.lines.map { (part.path, $0) } }
        if shown.count > count { shown.removeFirst(shown.count - count) }
        if let (path, first) = shown.first, LogMarker(parsing: first.text) == nil {
            printContinuedLaunch(before: first.offset, in: path)
        }
        for (_, line) in shown { Self.show(line) }
        fflush(nil)
        return true
    }

    /// Prints what is appended from now on, until the process is interrupted.
    mutating func follow() throws {
        let watcher = try ChangeWatcher()
        try watcher.watch(paths.logs, mask: UInt32(IN_MODIFY | IN_CREATE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE))
        while true {
            readAppended()
            _ = watcher.wait(timeout: nil)
            _ = watcher.drain()
        }
    }

    /// Prints the complete lines appended since the last read; a new file (rotation) is read from
    /// its start, after the end of the old one (now `.1`) is printed.
    private mutating func readAppended() {
        while true {
            var excerpt = LogReader.read(LogRequest(app: app, position: .after(offset: offset), maximumLines: 5000), paths: paths)
            if excerpt.problem != nil { return }
            if let known = file, excerpt.file != known {
                let rotated = LogReader.read(LogRequest(app: app, position: .after(offset: offset), maximumLines: 5000),
                                             path: paths.rotatedAppLog(app, 1))
                if rotated.file == known { rotated.lines.filter(\.complete).forEach(Self.show) }
                file = excerpt.file
                offset = 0
                excerpt = LogReader.read(LogRequest(app: app, position: .after(offset: 0), maximumLines: 5000), paths: paths)
            }
            file = excerpt.file ?? file
            let complete = excerpt.lines.filter(\.complete)
            complete.forEach(Self.show)
            fflush(nil)
            guard let last = complete.last else { return }
            offset = last.end
            if complete.count < 5000 { return }
        }
    }

    /// Names the launch whose output the line at `offset` of `path` is part of, if a marker is before it.
    private func printContinuedLaunch(before offset: Int64, in path: String) {
        let search = LogReader.read(LogRequest(app: app, position: .search(text: LogMarker.prefix, offset: offset, backwards: true),
                                               maximumLines: 1), path: path)
        guard let match = search.match, let line = search.lines.first(where: { $0.offset == match }),
              let marker = LogMarker(parsing: line.text) else { return }
        print(Self.heading(marker) + " (continued)")
    }

    private static func show(_ line: LogLine) {
        print(LogMarker(parsing: line.text).map(heading) ?? line.text)
    }

    /// A marker line as it is shown: the launch, what it ran, when (local time).
    static func heading(_ marker: LogMarker) -> String {
        let work = zip(marker.kinds, marker.identifiers).map { "\($0) \($1)" }.joined(separator: ", ")
        let time = WallClockZone.system.time(of: marker.time)
        return "── launch \(marker.launchID) · \(work) · \(time) ──"
    }
}
