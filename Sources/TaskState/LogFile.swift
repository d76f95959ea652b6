import CLinuxSupport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// An open log and the chunked reads the answers are made of.
struct LogFile {
    let descriptor: Int32
    let size: Int64

    private static let newline = UInt8(ascii: "\n")

    /// Up to `count` bytes at `offset` (fewer at the end of the file or on an error).
    func bytes(at offset: Int64, count: Int) -> [UInt8] {
        guard count > 0, offset < size else { return [] }
        var buffer = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = buffer.withUnsafeMutableBytes { raw in
                pread(descriptor, raw.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled))
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            filled += n
        }
        buffer.removeSubrange(filled...)
        return buffer
    }

    /// The line at `start` that is `length` bytes long, its head made displayable.
    private func line(at start: Int64, length: Int64, complete: Bool) -> LogLine {
        let head = bytes(at: start, count: Int(min(length, Int64(LogText.maximumBytes))))
        return LogLine(offset: start, length: length, complete: complete, text: LogText.displayable(head))
    }

    /// Up to `count` lines from `start` (a line start), stopping before `limit`.
    func lines(from start: Int64, count: Int, limit: Int64? = nil) -> [LogLine] {
        let stop = min(limit ?? size, size)
        var lines: [LogLine] = []
        var lineStart = start
        var position = start
        scanning: while lines.count < count, position < stop {
            let chunk = bytes(at: position, count: Int(min(Int64(LogReader.chunkSize), stop - position)))
            if chunk.isEmpty { break }
            var index = chunk.startIndex
            while let found = chunk[index...].firstIndex(of: Self.newline) {
                let end = position + Int64(found)
                lines.append(line(at: lineStart, length: end - lineStart, complete: true))
                lineStart = end + 1
                index = found + 1
                if lines.count == count { break scanning }
            }
            position += Int64(chunk.count)
            // A line longer than anyone will read is shown in pieces rather than looked through to its end.
            if position - lineStart >= LogReader.lineScanLimit {
                lines.append(line(at: lineStart, length: position - lineStart, complete: false))
                lineStart = position
            }
        }
        if lines.count < count, lineStart < stop, position >= stop {
            // The file's last line, still being written, or a piece cut at `limit`.
            lines.append(line(at: lineStart, length: stop - lineStart, complete: false))
        }
        return lines
    }

    /// Up to `count` lines that end at or before `end` (a line start or the end of the file).
    func lines(before end: Int64, count: Int) -> [LogLine] {
        guard end > 0 else { return [] }
        // Find the start of the `count`th line above `end` scanning backwards; the newline at
        // end - 1 ends the last of them and starts nothing.
        var starts = 0
        var first: Int64 = 0
        var position = end - 1
        var lastStart = end
        scanning: while position > 0 {
            let from = max(0, position - Int64(LogReader.chunkSize))
            let chunk = bytes(at: from, count: Int(position - from))
            if chunk.isEmpty { break }
            var index = chunk.endIndex
            while let found = chunk[..<index].lastIndex(of: Self.newline) {
                starts += 1
                lastStart = from + Int64(found) + 1
                if starts == count { first = lastStart; break scanning }
                index = found
            }
            position = from
            if lastStart - position >= LogReader.lineScanLimit { first = position; break }
        }
        return Array(lines(from: first, count: Int.max, limit: end).suffix(count))
    }

    /// Lines around `offset` (a line start): a quarter of `count` above it, the rest from it on.
    func lines(around offset: Int64, count: Int) -> [LogLine] {
        let above = lines(before: offset, count: count / 4)
        return above + lines(from: offset, count: count - above.count)
    }

    /// The start of the line holding the byte at `offset`.
    func lineStart(containing offset: Int64) -> Int64 {
        var position = offset
        while position > 0, offset - position < LogReader.lineScanLimit {
            let from = max(0, position - Int64(LogReader.chunkSize))
            let chunk = bytes(at: from, count: Int(position - from))
            if chunk.isEmpty { break }
            if let found = chunk.lastIndex(of: Self.newline) { return from + Int64(found) + 1 }
            position = from
        }
        return position
    }

    /// The launch marker at `offset`, if the line there is one.
    func marker(at offset: Int64) -> LogMarker? {
        let head = bytes(at: offset, count: 512)
        guard let end = head.firstIndex(of: Self.newline) else { return nil }
        return LogMarker(parsing: String(decoding: head[..<end], as: UTF8.self))
    }

    /// The newest marker line of `launchID` (or of a launch of `identifier`), scanning back from the end.
    func findMarker(launchID: String?, identifier: String?) -> (line: Int64?, searchedTo: Int64) {
        let needle = Array((LogMarker.prefix + (launchID.map { $0 + " " } ?? "")).utf8)
        var before = size
        while true {
            let scan = lastOccurrence(of: needle, before: before, budget: LogReader.scanLimit - (size - before))
            guard let position = scan.position else { return (nil, scan.searchedTo) }
            if lineStart(containing: position) == position,
               marker(at: position)?.matches(launchID: launchID, identifier: identifier) == true {
                return (position, position)
            }
            before = position
        }
    }

    /// Bytes lowercased (ASCII), so searches ignore the case of letters.
    private static func folded(_ bytes: inout [UInt8]) {
        for index in bytes.indices where bytes[index] >= 0x41 && bytes[index] <= 0x5A { bytes[index] |= 0x20 }
    }

    /// Where `needle` occurs in `haystack` at or after `from`.
    private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard from <= haystack.count - needle.count else { return nil }
        return haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in
                guard let found = bg_memmem(hay.baseAddress! + from, hay.count - from, pin.baseAddress!, pin.count) else { return nil }
                return hay.baseAddress!.distance(to: UnsafeRawPointer(found))
            }
        }
    }

    /// The first occurrence of `needle` (letters in any case) at or after `offset`.
    func firstOccurrence(of needle: [UInt8], from offset: Int64) -> (position: Int64?, searchedTo: Int64) {
        var pattern = needle
        Self.folded(&pattern)
        var position = offset
        while position < size, position - offset < LogReader.scanLimit {
            let wanted = LogReader.searchChunkSize + pattern.count - 1
            var chunk = bytes(at: position, count: wanted)
            Self.folded(&chunk)
            if let found = Self.find(pattern, in: chunk, from: 0) { return (position + Int64(found), position + Int64(found)) }
            // A short read is the end of the file: nothing after it to look through.
            if chunk.count < wanted { position = size; break }
            position += Int64(chunk.count - pattern.count + 1)
        }
        return (nil, min(position, size))
    }

    /// The last occurrence of `needle` (letters in any case) that starts before `offset`, looking
    /// through at most `budget` bytes.
    func lastOccurrence(of needle: [UInt8], before offset: Int64, budget: Int64 = LogReader.scanLimit) -> (position: Int64?, searchedTo: Int64) {
        var pattern = needle
        Self.folded(&pattern)
        // An occurrence starting just before `offset` may run past it.
        var end = min(size, offset + Int64(pattern.count) - 1)
        var start = offset
        while start > 0, offset - start < budget {
            let from = max(0, end - Int64(LogReader.searchChunkSize) - Int64(pattern.count) + 1)
            var chunk = bytes(at: from, count: Int(end - from))
            Self.folded(&chunk)
            var last: Int?
            var index = 0
            while let found = Self.find(pattern, in: chunk, from: index), from + Int64(found) < offset {
                last = found
                index = found + 1
            }
            if let last { return (from + Int64(last), from + Int64(last)) }
            start = from
            end = from + Int64(pattern.count) - 1
            if from == 0 { break }
        }
        return (nil, max(0, start))
    }
}
