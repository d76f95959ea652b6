/// Cuts a newline-delimited stream (ntfy's JSON stream) into lines as its bytes arrive, with a
/// cap on a line's length: a server cannot make the scheduler hold an endless line.
struct StreamLines {
    /// A line longer than this ends the stream (ntfy's own messages are at most 4096 bytes of
    /// text, a few times that as escaped JSON).
    static let maximumLineBytes = 64 << 10

    /// A line was longer than ``maximumLineBytes``.
    struct LineTooLong: Error {
        var bytes: Int
    }

    private var pending: [UInt8] = []

    /// Bytes of a line whose newline has not come yet.
    var unfinishedBytes: Int { pending.count }

    /// The complete lines in `bytes` (with what was pending before them), without their
    /// newlines; empty lines (and `\r` before a newline) are dropped.
    mutating func append<Bytes: Sequence>(_ bytes: Bytes) throws(LineTooLong) -> [String] where Bytes.Element == UInt8 {
        var lines: [String] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
                if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)) }
                pending.removeAll(keepingCapacity: true)
                continue
            }
            pending.append(byte)
            if pending.count > Self.maximumLineBytes { throw LineTooLong(bytes: pending.count) }
        }
        return lines
    }
}
