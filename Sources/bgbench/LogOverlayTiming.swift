import Dashboard
import Foundation
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgbench dashboard`'s log overlay row: the time from `o` to a drawn pager on a 1 GiB log (the
/// dashboard asks, the reader reads the last lines by seeking from the end, the answer is placed
/// and the frame rendered), beside `tail -n` of as many lines of the same file in the same run.
enum LogOverlayTiming {
    struct Result {
        var pager: Samples
        var tail: Samples
        var fileSize: Int64
    }

    /// The log's size: 1 GiB.
    static let size: Int64 = 1 << 30

    /// Writes the log in `root` (a block of lines every 16 MiB with holes between, and a dense last
    /// 4 MiB, so it is quick to make and takes little disk), measures `runs` opens of each, and
    /// removes the file.
    static func measure(root: String, runs: Int) throws -> Result {
        let paths = StatePaths(root: root)
        try FileManager.default.createDirectory(atPath: paths.logs, withIntermediateDirectories: true)
        let app = try Identifier(validating: "com.example.chatty")
        let path = paths.appLog(app)
        defer { unlink(path) }
        try writeLog(path)

        let size = ScreenSize(width: 160, height: 48)
        let snapshot = DashboardSnapshot(now: Date(), stateDirectory: root)
        var pager: [Double] = []
        var tail: [Double] = []
        for _ in 0..<runs {
            let begin = DispatchTime.now().uptimeNanoseconds
            var state = DashboardState()
            var effects = state.openLog(app: app, subject: "end", position: .end, size: size)
            while case .readLog(let request)? = effects.first {
                effects = state.receiveLog(LogReader.read(request, paths: paths))
            }
            let grid = DashboardView.render(snapshot, state: state, size: size, theme: .builtInDefault, glyphs: .unicode)
            pager.append(Double(DispatchTime.now().uptimeNanoseconds - begin) / 1e9)
            precondition(state.logPager?.lines.count == LogPager.chunkLines && grid.size == size)

            let start = DispatchTime.now().uptimeNanoseconds
            let ending = try TimedProcess.run("tail", ["-n", "\(LogPager.chunkLines)", path], timeout: 30, scratch: root)
            tail.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            guard ending.status == 0 else { throw BenchError("tail failed: \(ending.lastError)") }
        }
        return Result(pager: Samples(pager), tail: Samples(tail), fileSize: Self.size)
    }

    private static func writeLog(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot create \(path)") }
        defer { close(descriptor) }
        var block = ""
        var line = 0
        while block.utf8.count < 4 << 20 {
            block += "2026-11-22T10:00:00.000Z chatty: line \(line) of handler output, with some words to make it log-like\n"
            line += 1
        }
        let bytes = Array(block.utf8)
        func put(_ data: ArraySlice<UInt8>, at offset: Int64) throws {
            let written = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress!, $0.count, off_t(offset)) }
            guard written == data.count else { throw BenchError("cannot write \(path)") }
        }
        // Every block starts on a line of its own: a newline ends the hole before it.
        var offset: Int64 = 0
        while offset < Self.size - Int64(bytes.count) {
            try put(bytes.prefix(64 << 10), at: offset)
            offset += 16 << 20
        }
        try put(bytes[...], at: Self.size - Int64(bytes.count))
    }
}
