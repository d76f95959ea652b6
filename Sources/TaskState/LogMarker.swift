import FoundationEssentials

/// The line the scheduler writes into `logs/<app>.log` just before it starts a process, at the
/// offset it records as the launch's `logOffset`:
///
///     --- bgtaskd: launch com.example.news-1795342296010 appRefresh com.example.news.refresh at 2026-11-22T10:00:00.000Z ---
///
/// Kinds and identifiers of a coalesced launch are separated by commas. Anyone reading the log
/// with `less` sees where each launch's output starts; the dashboard's pager finds it by its offset,
/// or, for a launch recorded without one, by scanning for this line.
public struct LogMarker: Hashable, Sendable {
    /// What every marker line starts with.
    public static let prefix = "--- bgtaskd: launch "

    public var launchID: String
    public var kinds: [String]
    public var identifiers: [String]
    public var time: Date

    public init(launchID: String, kinds: [String], identifiers: [String], time: Date) {
        self.launchID = launchID
        self.kinds = kinds
        self.identifiers = identifiers
        self.time = time
    }

    /// The line, with its newline.
    public var line: String {
        "\(Self.prefix)\(launchID) \(kinds.joined(separator: ",")) \(identifiers.joined(separator: ",")) at \(JSONFormat.string(from: time)) ---\n"
    }

    /// Reads a marker line (without its newline); `nil` for any other line.
    public init?(parsing text: String) {
        guard text.hasPrefix(Self.prefix), text.hasSuffix(" ---") else { return nil }
        let fields = text.dropFirst(Self.prefix.count).dropLast(4).split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count == 5, fields[3] == "at", let time = JSONFormat.date(from: String(fields[4])) else { return nil }
        launchID = String(fields[0])
        kinds = fields[1].split(separator: ",").map(String.init)
        identifiers = fields[2].split(separator: ",").map(String.init)
        self.time = time
    }

    /// Whether this marker starts the launch `launchID`, or (without one) a launch of `identifier`
    /// (without either: any launch).
    public func matches(launchID wanted: String?, identifier: String?) -> Bool {
        if let wanted { return launchID == wanted }
        if let identifier { return identifiers.contains(identifier) }
        return true
    }
}
