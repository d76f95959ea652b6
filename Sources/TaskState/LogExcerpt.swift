/// One line of a log as it may be shown: its text made safe for a terminal (see ``LogText``).
public struct LogLine: Codable, Hashable, Sendable {
    /// Where the line starts in the file.
    public var offset: Int64
    /// Its length in bytes, without the newline.
    public var length: Int64
    /// Whether a newline ends it (the last line may still be being written).
    public var complete: Bool
    /// The text to show: at most ``LogText/maximumBytes`` of the line, invalid UTF-8 replaced,
    /// control characters escaped.
    public var text: String

    public init(offset: Int64, length: Int64, complete: Bool, text: String) {
        self.offset = offset
        self.length = length
        self.complete = complete
        self.text = text
    }

    /// Where the next line starts.
    public var end: Int64 { offset + length + (complete ? 1 : 0) }
    /// Whether `text` shows only the start of the line.
    public var isCut: Bool { length > Int64(LogText.maximumBytes) }
}

/// Which file a log was when it was read: a log replaced (rotated) by another file has another identity.
public struct FileIdentity: Codable, Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// ``LogReader``'s answer to a ``LogRequest``: consecutive lines of the log and where they are.
public struct LogExcerpt: Codable, Hashable, Sendable {
    public var app: Identifier
    /// The request's serial.
    public var serial: Int
    /// The request's position, so the asker knows how to place the lines.
    public var position: LogRequest.Position
    /// The file read, and its size when read.
    public var file: FileIdentity?
    public var fileSize: Int64
    /// Consecutive lines, oldest first (empty when nothing matched or the log cannot be read).
    public var lines: [LogLine]
    /// The line a search or a launch found.
    public var match: Int64?
    /// A search or launch scan that found nothing looked down to here (backwards) or up to here.
    public var searchedTo: Int64?
    /// Why the log could not be read, in one line (`logs/X.log is a FIFO, not a regular file`).
    public var problem: String?

    public init(app: Identifier, serial: Int, position: LogRequest.Position, file: FileIdentity?, fileSize: Int64,
                lines: [LogLine], match: Int64? = nil, searchedTo: Int64? = nil, problem: String? = nil) {
        self.app = app
        self.serial = serial
        self.position = position
        self.file = file
        self.fileSize = fileSize
        self.lines = lines
        self.match = match
        self.searchedTo = searchedTo
        self.problem = problem
    }

    /// Where the lines start, and where the next line after them starts.
    public var start: Int64? { lines.first?.offset }
    public var end: Int64? { lines.last?.end }
}
