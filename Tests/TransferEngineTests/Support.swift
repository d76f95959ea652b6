import Foundation
import LoopbackServer
import TaskState
import Testing
import TransferEngine
#if canImport(Glibc)
import Glibc
#endif

/// A validated identifier, for literals known to be valid.
func ident(_ text: String) -> Identifier {
    do {
        return try Identifier(validating: text)
    } catch {
        fatalError("test identifier '\(text)' is invalid: \(error)")
    }
}

let app = ident("com.example.photos")

/// One test's world: a loopback server, an engine, a state folder and an app folder, all removed
/// (and the server's and engine's threads stopped) when the test's body returns.
struct TransferFixture {
    let server: LoopbackServer
    let engine: TransferEngine
    let root: String
    let paths: StatePaths
    let appFolder: String

    func key(_ name: String) -> TaskKey { TaskKey(app: app, identifier: ident(name)) }

    /// A download of `path` on the server to `destination` in the app folder.
    func download(_ name: String, _ path: String, to destination: String? = nil,
                  timeout: Double = 10,
                  resourceDeadline: Date? = nil) -> TransferJob {
        let key = key(name)
        return .download(key, from: server.url(path), partialFile: paths.transferPartialData(key),
                         appFolder: appFolder, destination: destination ?? "\(name).bin",
                         timeoutIntervalForRequest: timeout, resourceDeadline: resourceDeadline)
    }

    func partialLength(_ name: String) -> Int64? {
        fileSize(paths.transferPartialData(key(name)))
    }

    /// Records `validator` for the partial data of `name`, as an earlier attempt would have.
    func recordValidator(_ name: String, _ validator: ResumeValidator) throws {
        try StateFiles.write(try JSONFormat.encode(validator), to: validatorFile(name), durable: false)
    }

    /// The file beside the partial data that holds its validator.
    func validatorFile(_ name: String) -> String {
        paths.transferPartialData(key(name)) + ".validator"
    }
}

func withFixture(connectTimeout: Double = TransferEngine.defaultConnectTimeout,
                 _ body: (TransferFixture) async throws -> Void) async throws {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("bgtop-transfer-\(UUID().uuidString)").path
    let paths = StatePaths(root: root + "/state")
    let appFolder = root + "/apps/\(app)"
    try FileManager.default.createDirectory(atPath: paths.transfers + "/\(app)", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: appFolder, withIntermediateDirectories: true)
    let server = try await LoopbackServer.start()
    let engine = TransferEngine(connectTimeout: connectTimeout)
    let fixture = TransferFixture(server: server, engine: engine, root: root, paths: paths, appFolder: appFolder)
    do {
        try await body(fixture)
    } catch {
        await engine.shutdown()
        await server.shutdown()
        try? FileManager.default.removeItem(atPath: root)
        throw error
    }
    await engine.shutdown()
    await server.shutdown()
    try? FileManager.default.removeItem(atPath: root)
}

/// Runs one attempt to its final event and returns every event.
func runAttempt(_ engine: TransferEngine, _ job: TransferJob) async throws -> [TransferEvent] {
    let (stream, continuation) = AsyncStream<TransferEvent>.makeStream()
    try engine.start(job) { event in
        continuation.yield(event)
        if event.isFinal { continuation.finish() }
    }
    var events: [TransferEvent] = []
    for await event in stream { events.append(event) }
    return events
}

extension Array where Element == TransferEvent {
    var final: TransferEvent.Kind? { last?.kind }
    var progressEvents: [TransferEvent] { filter { $0.kind == .progress } }
    /// The validator the last progress event reported.
    var validator: ResumeValidator { last?.progress.validator ?? ResumeValidator() }
}

func fileSize(_ path: String) -> Int64? {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    return Int64(info.st_size)
}

func fileExists(_ path: String) -> Bool {
    var info = stat()
    return lstat(path, &info) == 0
}

/// Runs blocking work (file reads, waiting for a process) on a Dispatch thread, so it does not
/// hold one of the few threads the engine's and server's tasks run on while other tests run.
func offCooperativePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(with: Result { try work() }) }
    }
}

/// SHA-256 of a file by the real `sha256sum`.
func sha256sum(_ path: String) async throws -> String {
    try await offCooperativePool { try sha256sumBlocking(path) }
}

private func sha256sumBlocking(_ path: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
    process.arguments = [path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init) ?? ""
}

/// Writes generated bytes to a file (for sha256sum), in 1 MiB pieces.
func writeGenerated(_ bytes: GeneratedBytes, to path: String) async throws {
    try await offCooperativePool { try writeGeneratedBlocking(bytes, to: path) }
}

private func writeGeneratedBlocking(_ bytes: GeneratedBytes, to path: String) throws {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var offset: Int64 = 0
    while offset < bytes.size {
        let end = Swift.min(bytes.size, offset + (1 << 20))
        try handle.write(contentsOf: Data(bytes.bytes(offset..<end)))
        offset = end
    }
}

/// Whether `path` holds exactly `bytes`, compared with sha256sum on both sides.
func holdsExactly(_ path: String, _ bytes: GeneratedBytes, scratch: String) async throws -> Bool {
    let expected = scratch + "/expected-\(UUID().uuidString)"
    try await writeGenerated(bytes, to: expected)
    defer { try? FileManager.default.removeItem(atPath: expected) }
    return try await sha256sum(path) == sha256sum(expected)
}

/// Whether the file at `path` equals `bytes`, compared piece by piece without holding either whole.
func matchesGenerated(_ path: String, _ bytes: GeneratedBytes) async throws -> Bool {
    try await offCooperativePool { try matchesGeneratedBlocking(path, bytes) }
}

private func matchesGeneratedBlocking(_ path: String, _ bytes: GeneratedBytes) throws -> Bool {
    guard fileSize(path) == bytes.size else { return false }
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var offset: Int64 = 0
    while offset < bytes.size {
        let end = Swift.min(bytes.size, offset + (4 << 20))
        let expected = bytes.bytes(offset..<end)
        guard let data = try handle.read(upToCount: expected.count), data.count == expected.count else { return false }
        let same = data.withUnsafeBytes { actual in
            expected.withUnsafeBytes { memcmp(actual.baseAddress!, $0.baseAddress!, expected.count) == 0 }
        }
        guard same else { return false }
        offset = end
    }
    return true
}

/// The process's peak resident memory (VmHWM) in KiB.
func peakResidentKiB() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
}
