import Foundation
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// ``LogReader`` answers from a log without reading it whole: from the end of a huge sparse file,
/// the chunk above, searches both ways across chunk boundaries, a truncated or replaced log, and
/// hostile content (FIFOs, links, bad UTF-8, escape sequences, a megabyte without a newline).
@Suite("Log reader")
struct LogReaderTests {
    let app = ident("com.example.news")

    private func request(_ position: LogRequest.Position, lines: Int = 400) -> LogRequest {
        LogRequest(app: app, position: position, maximumLines: lines, serial: 7)
    }

    /// Appends `text` to `path` (creating it) with plain Foundation.
    private func append(_ text: String, to path: String) throws {
        if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// `count` numbered lines: "line 0", "line 1", ...
    private func numbered(_ range: Range<Int>) -> String {
        range.map { "line \($0)\n" }.joined()
    }

    @Test func theEndOfAHugeSparseLogIsReadWithoutReadingTheRest() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/huge.log"
            // 4 GiB of holes (never read: reading them whole would take seconds), then three lines.
            #expect(FileManager.default.createFile(atPath: path, contents: nil))
            #expect(truncate(path, 4 << 30) == 0)
            try append("\nfirst\nsecond\nthird\n", to: path)
            let excerpt = LogReader.read(request(.end, lines: 3), path: path)
            #expect(excerpt.problem == nil)
            #expect(excerpt.serial == 7)
            let holes: Int64 = 4 << 30
            #expect(excerpt.fileSize == holes + 20)
            #expect(excerpt.lines.map(\.text) == ["first", "second", "third"])
            #expect(excerpt.lines.first?.offset == holes + 1)
            #expect(excerpt.end == excerpt.fileSize)
        }
    }

    @Test func theChunkAboveEndsWhereTheWindowStarts() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/app.log"
            try append(numbered(0..<5000), to: path)
            let last = LogReader.read(request(.end, lines: 100), path: path)
            #expect(last.lines.map(\.text) == (4900..<5000).map { "line \($0)" })
            let above = LogReader.read(request(.before(offset: last.start!), lines: 100), path: path)
            #expect(above.lines.map(\.text) == (4800..<4900).map { "line \($0)" })
            #expect(above.end == last.start)
            let below = LogReader.read(request(.after(offset: above.end!), lines: 3), path: path)
            #expect(below.lines.map(\.text) == ["line 4900", "line 4901", "line 4902"])
            let top = LogReader.read(request(.before(offset: LogReader.read(request(.after(offset: 0), lines: 2), path: path).start!)), path: path)
            #expect(top.lines.isEmpty)
        }
    }

    @Test func searchesFindTheNearestMatchBothWaysAcrossChunkBoundaries() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/app.log"
            // Matches 3 MB apart, so each search crosses several 1 MiB search chunks.
            let filler = String(repeating: "x", count: 999) + "\n"
            try append("NEEDLE one\n", to: path)
            for _ in 0..<3000 { try append(filler, to: path) }
            try append("a Needle two\n", to: path)
            for _ in 0..<3000 { try append(filler, to: path) }
            try append("tail\n", to: path)
            let size = LogReader.read(request(.end, lines: 1), path: path).fileSize

            let older = LogReader.read(request(.search(text: "needle", offset: size, backwards: true), lines: 10), path: path)
            let two = try #require(older.match)
            #expect(older.lines.first { $0.offset == two }?.text == "a Needle two")
            let oldest = LogReader.read(request(.search(text: "needle", offset: two, backwards: true), lines: 10), path: path)
            #expect(oldest.match == 0)
            #expect(oldest.lines.first?.text == "NEEDLE one")
            let none = LogReader.read(request(.search(text: "needle", offset: 0, backwards: true)), path: path)
            #expect(none.match == nil && none.lines.isEmpty)

            let newer = LogReader.read(request(.search(text: "NEEDLE", offset: 11, backwards: false), lines: 10), path: path)
            #expect(newer.match == two)
            let twoEnd = try #require(older.lines.first { $0.offset == two }?.end)
            let past = LogReader.read(request(.search(text: "needle", offset: twoEnd, backwards: false)), path: path)
            #expect(past.match == nil && past.searchedTo == size)
        }
    }

    @Test func aMatchAcrossTheBoundaryBetweenTwoSearchChunksIsFound() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/app.log"
            // "boundary" straddles byte 1 MiB, the end of the first forward chunk.
            let start = (1 << 20) - 4
            try append(String(repeating: "y", count: start - 1) + "\n", to: path)
            try append("boundary\nend\n", to: path)
            let forward = LogReader.read(request(.search(text: "boundary", offset: 0, backwards: false), lines: 4), path: path)
            #expect(forward.match == Int64(start))
            let size = Int64(start + 13)
            let backward = LogReader.read(request(.search(text: "boundary", offset: size, backwards: true), lines: 4), path: path)
            #expect(backward.match == Int64(start))
        }
    }

    @Test func aTruncatedOrReplacedLogIsSeenInTheAnswer() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/app.log"
            try append(numbered(0..<100), to: path)
            let before = LogReader.read(request(.end, lines: 10), path: path)
            #expect(truncate(path, 0) == 0)
            try append("after truncation\n", to: path)
            let cut = LogReader.read(request(.after(offset: before.end!)), path: path)
            #expect(cut.fileSize < before.end!)
            #expect(cut.lines.isEmpty)
            #expect(cut.file == before.file)

            try append("old\n", to: path + ".new")
            #expect(rename(path + ".new", path) == 0)
            let replaced = LogReader.read(request(.end), path: path)
            #expect(replaced.file != before.file)
            #expect(replaced.lines.map(\.text) == ["old"])
        }
    }

    @Test func aFIFOOrASymbolicLinkIsRefusedWithoutBlocking() throws {
        try withTemporaryDirectory { directory in
            let fifo = "\(directory)/fifo.log"
            #expect(mkfifo(fifo, 0o600) == 0)
            let refused = LogReader.read(request(.end), path: fifo)
            #expect(refused.problem == "\(fifo) is a FIFO, not a regular file")
            #expect(refused.lines.isEmpty)

            try append("secret\n", to: "\(directory)/target")
            #expect(symlink("\(directory)/target", "\(directory)/link.log") == 0)
            let link = LogReader.read(request(.end), path: "\(directory)/link.log")
            #expect(link.problem == "\(directory)/link.log is a symbolic link; refusing to follow it")
            #expect(link.lines.isEmpty)

            let missing = LogReader.read(request(.end), path: "\(directory)/none.log")
            #expect(missing.problem?.hasPrefix("no output yet") == true)
        }
    }

    @Test func badUTF8AndControlCharactersAreMadeSafe() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/app.log"
            #expect(FileManager.default.createFile(atPath: path, contents: Data([0x61, 0xFF, 0xFE, 0x62, 0x0A]
                + Array("\u{1B}[2J\u{1B}]0;title\u{07}red\tx\r\n".utf8) + [0xC2, 0x9B, 0x0A])))
            let excerpt = LogReader.read(request(.end), path: path)
            #expect(excerpt.lines.map(\.text) == ["a\u{FFFD}\u{FFFD}b", "^[[2J^[]0;title^Gred    x", "<9B>"])
            for line in excerpt.lines {
                #expect(!line.text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
            }
        }
    }

    @Test func aOneMebibyteLineIsCutForDisplayAndTheLinesAroundItStayWhole() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/app.log"
            try append("before\n" + String(repeating: "z", count: 1 << 20) + "\nafter\n", to: path)
            let excerpt = LogReader.read(request(.end), path: path)
            #expect(excerpt.lines.map { $0.text.prefix(6) } == ["before", "zzzzzz", "after"])
            let long = excerpt.lines[1]
            #expect(long.length == 1 << 20 && long.isCut && long.complete)
            #expect(long.text.utf8.count == LogText.maximumBytes)
            let search = LogReader.read(request(.search(text: "after", offset: 0, backwards: false), lines: 3), path: path)
            #expect(search.match == long.end)
        }
    }

    @Test func aLaunchIsFoundByItsOffsetOrByItsMarkerLine() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/app.log"
            let time = referenceDate
            let first = LogMarker(launchID: "com.example.news-1", kinds: ["appRefresh"], identifiers: ["com.example.news.refresh"], time: time)
            let second = LogMarker(launchID: "com.example.news-2", kinds: ["processing", "appRefresh"],
                                   identifiers: ["com.example.news.sync", "com.example.news.refresh"], time: time)
            try append(first.line + "one\n" + second.line + "two\n" + numbered(0..<50), to: path)
            #expect(LogMarker(parsing: String(second.line.dropLast())) == second)
            let secondOffset = Int64(first.line.utf8.count + 4)

            let byOffset = LogReader.read(request(.launch(launchID: "com.example.news-2", identifier: nil, offset: secondOffset)), path: path)
            #expect(byOffset.match == secondOffset)
            // A stale offset (pointing elsewhere) falls back to the scan.
            let stale = LogReader.read(request(.launch(launchID: "com.example.news-1", identifier: nil, offset: secondOffset)), path: path)
            #expect(stale.match == 0)
            let byIdentifier = LogReader.read(request(.launch(launchID: nil, identifier: "com.example.news.refresh", offset: nil)), path: path)
            #expect(byIdentifier.match == secondOffset)
            let none = LogReader.read(request(.launch(launchID: "com.example.news-3", identifier: nil, offset: nil), lines: 5), path: path)
            #expect(none.match == nil && none.searchedTo == 0)
            #expect(none.lines.map(\.text) == (45..<50).map { "line \($0)" })
        }
    }

    @Test func requestsAndExcerptsTravelAsJSON() throws {
        let request = LogRequest(app: app, position: .search(text: "x", offset: 5, backwards: true), maximumLines: 10, serial: 3)
        let data = try JSONFormat.encoder(pretty: false).encode(request)
        #expect(try JSONFormat.decoder().decode(LogRequest.self, from: data) == request)
        let excerpt = LogExcerpt(app: app, serial: 3, position: request.position, file: FileIdentity(device: 1, inode: 2),
                                 fileSize: 9, lines: [LogLine(offset: 0, length: 3, complete: true, text: "abc")], match: 0)
        let text = try JSONFormat.encoder(pretty: false).encode(excerpt)
        #expect(try JSONFormat.decoder().decode(LogExcerpt.self, from: text) == excerpt)
    }

    @Test func oldTaskFilesAndEventsWithoutALogOffsetStillDecode() throws {
        let event = #"{"time":"2026-11-22T10:00:00.000Z","type":"launched","app":"com.example.news","message":"m"}"#
        #expect(try JSONFormat.decoder().decode(Event.self, from: Data(event.utf8)).logOffset == nil)
        let withOffset = #"{"time":"2026-11-22T10:00:00.000Z","type":"launched","message":"m","logOffset":42}"#
        #expect(try JSONFormat.decoder().decode(Event.self, from: Data(withOffset.utf8)).logOffset == 42)
    }
}
