/// A question about an app's log (`logs/<app>.log`), answered by ``LogReader`` with a
/// ``LogExcerpt``. Both are values (and `Codable`), so the question can be asked of a local file or
/// carried to another host and back as JSON; the asker treats the answer as arriving later.
public struct LogRequest: Codable, Hashable, Sendable {
    /// Which part of the log.
    public enum Position: Codable, Hashable, Sendable {
        /// The last lines: what `tail` shows.
        case end
        /// Lines ending just before `offset` (a line start): the chunk above what is shown.
        case before(offset: Int64)
        /// Lines from `offset` (a line start) on: the chunk below, or output appended since.
        case after(offset: Int64)
        /// The output of a launch: from its marker line at `offset` when that is one, else from the
        /// newest marker of `launchID` (or of a launch of `identifier`), found scanning back from the end.
        case launch(launchID: String?, identifier: String?, offset: Int64?)
        /// The nearest line containing `text` (ASCII letters in any case) that starts before
        /// `offset` (`backwards`) or after it.
        case search(text: String, offset: Int64, backwards: Bool)
    }

    public var app: Identifier
    public var position: Position
    /// At most this many lines in the answer.
    public var maximumLines: Int
    /// Echoed in the answer, so an asker can drop answers to questions it no longer asks.
    public var serial: Int

    public init(app: Identifier, position: Position, maximumLines: Int = 400, serial: Int = 0) {
        self.app = app
        self.position = position
        self.maximumLines = maximumLines
        self.serial = serial
    }
}
