import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Splits what a non-blocking descriptor delivers into lines, never holding more than `limit`
/// bytes of one line: a longer line is reported once as ``Line/tooLong`` and skipped to its
/// newline, so a peer that never sends a newline cannot grow memory.
public struct BoundedLineReader: Sendable {
    /// One piece of input.
    public enum Line: Sendable, Equatable {
        /// A complete line, without its newline.
        case text(Data)
        /// A line longer than the limit, dropped.
        case tooLong
    }

    public let limit: Int
    private var partial = Data()
    private var skipping = false
    /// The descriptor reached its end (EOF or an error other than "try again").
    public private(set) var ended = false

    public init(limit: Int) {
        self.limit = limit
    }

    /// Reads once from `descriptor` (after `poll` said it is readable, so a blocking descriptor
    /// does not block) and returns the complete lines; "try again" reads nothing.
    public mutating func read(from descriptor: Int32) -> [Line] {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = Glibc.read(descriptor, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return [] }
            if n <= 0 {
                ended = true
                return []
            }
            return take(buffer[0..<n])
        }
    }

    /// Splits `bytes` (appended to what came before) into lines.
    public mutating func take<Bytes: Collection>(_ bytes: Bytes) -> [Line] where Bytes.Element == UInt8 {
        var lines: [Line] = []
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: 0x0A) {
            let piece = rest[rest.startIndex..<newline]
            if skipping {
                skipping = false
            } else if partial.count + piece.count >= limit {
                lines.append(.tooLong)
            } else {
                partial.append(contentsOf: piece)
                lines.append(.text(partial))
            }
            partial = Data()
            rest = rest[rest.index(after: newline)...]
        }
        guard !skipping else { return lines }
        if partial.count + rest.count >= limit {
            lines.append(.tooLong)
            partial = Data()
            skipping = true
        } else {
            partial.append(contentsOf: rest)
        }
        return lines
    }
}
