/// Why the terminal could not be opened: one clear line, meant to be printed after the program's
/// name (`bgtop: standard output is not a terminal`).
public struct TerminalError: Error, CustomStringConvertible {
    /// The message, one line, no trailing newline or program name.
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
