import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Answers ``LogRequest``s from a log file without ever reading it whole: every answer is a few
/// `pread`s of bounded chunks near the part asked for, so a 1 GiB log opens as fast as a small one.
///
/// The file is opened with `O_NOFOLLOW|O_NONBLOCK` and must be a regular file (``RegularFile``):
/// a FIFO or a link planted as a log is refused with a reason, never waited on or followed.
public enum LogReader {
    /// Bytes read at a time when looking for line ends and starts.
    static let chunkSize = 64 * 1024
    /// Bytes read at a time by searches.
    static let searchChunkSize = 1 << 20
    /// The most bytes one search or marker scan looks through; beyond, the answer says how far it got.
    public static let scanLimit: Int64 = 256 << 20
    /// The longest line looked through for its end or its start; longer lines are taken in pieces.
    public static let lineScanLimit: Int64 = 4 << 20

    /// Answers `request` from the app's log in `paths`; problems name it `logs/<app>.log`.
    public static func read(_ request: LogRequest, paths: StatePaths) -> LogExcerpt {
        read(request, path: paths.appLog(request.app), name: "logs/\(request.app).log")
    }

    /// Answers `request` from the log at `path`; problems name it `name` (by default, its path).
    public static func read(_ request: LogRequest, path: String, name: String? = nil) -> LogExcerpt {
        var excerpt = answer(request, path: path)
        if let name, let problem = excerpt.problem { excerpt.problem = problem.replacing(path, with: name) }
        return excerpt
    }

    private static func answer(_ request: LogRequest, path: String) -> LogExcerpt {
        var excerpt = LogExcerpt(app: request.app, serial: request.serial, position: request.position,
                                 file: nil, fileSize: 0, lines: [])
        let descriptor: Int32
        do {
            descriptor = try RegularFile.open(path, O_RDONLY)
        } catch {
            if case .system(_, _, let code) = error, code == ENOENT {
                excerpt.problem = "no output yet: \(path) does not exist"
            } else {
                excerpt.problem = error.description
            }
            return excerpt
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            excerpt.problem = StateError.system(operation: "cannot stat", path: path, errno: errno).description
            return excerpt
        }
        let file = LogFile(descriptor: descriptor, size: Int64(info.st_size))
        excerpt.file = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        excerpt.fileSize = file.size
        let count = max(1, min(request.maximumLines, 5000))
        switch request.position {
        case .end:
            excerpt.lines = file.lines(before: file.size, count: count)
        case .before(let offset):
            excerpt.lines = file.lines(before: min(max(0, offset), file.size), count: count)
        case .after(let offset):
            excerpt.lines = offset < file.size ? file.lines(from: max(0, offset), count: count) : []
        case .launch(let launchID, let identifier, let offset):
            var found: Int64?
            if let offset, offset >= 0, offset < file.size, file.marker(at: offset)?.matches(launchID: launchID, identifier: identifier) == true {
                found = offset
            } else {
                let scan = file.findMarker(launchID: launchID, identifier: identifier)
                found = scan.line
                if found == nil { excerpt.searchedTo = scan.searchedTo }
            }
            if let found {
                excerpt.match = found
                excerpt.lines = file.lines(around: found, count: count)
            } else {
                excerpt.lines = file.lines(before: file.size, count: count)
            }
        case .search(let text, let offset, let backwards):
            let needle = Array(text.utf8)
            guard !needle.isEmpty else { return excerpt }
            let scan = backwards ? file.lastOccurrence(of: needle, before: min(max(0, offset), file.size))
                                 : file.firstOccurrence(of: needle, from: max(0, offset))
            if let position = scan.position {
                let line = file.lineStart(containing: position)
                excerpt.match = line
                excerpt.lines = file.lines(around: line, count: count)
            } else {
                excerpt.searchedTo = scan.searchedTo
            }
        }
        return excerpt
    }
}
