import Foundation
import LoopbackServer
#if canImport(Glibc)
import Glibc
#endif

/// The run's private folder: created with `mkdtemp` (mode 0700) under the chosen parent, holding
/// every scheduler's state and config, the app scripts and the SQLite databases, so that bgtop and
/// SQLite are measured on the same file system. Removed at the end unless asked to keep it.
final class Workspace {
    let root: String

    /// Where a benchmark's folder goes when `--directory` is not given: `$TMPDIR`, else `/tmp`.
    static func parent(_ directory: String?) -> String {
        directory ?? ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    }

    /// Creates `<parent>/bgbench-XXXXXX`.
    init(parent: String) throws {
        var parent = parent
        while parent.count > 1 && parent.hasSuffix("/") { parent.removeLast() }
        var template = Array("\(parent)/bgbench-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        guard created != nil else {
            throw BenchError("cannot create a folder in \(parent): \(String(cString: strerror(errno)))")
        }
        root = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// `name`, or `name-2`, `name-3`, ... : the first that does not exist yet under the root, so
    /// that every measurement starts from an empty folder.
    func freshName(_ name: String) -> String {
        var candidate = name
        var number = 1
        while FileManager.default.fileExists(atPath: "\(root)/\(candidate)") {
            number += 1
            candidate = "\(name)-\(number)"
        }
        return candidate
    }

    /// Creates (mode 0700) and returns `<root>/<name>`, with missing parents.
    func folder(_ name: String) throws -> String {
        let path = "\(root)/\(name)"
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw BenchError("cannot create \(path): \(error.localizedDescription)")
        }
        return path
    }

    /// Writes an executable script (mode 0700).
    func writeScript(_ path: String, _ text: String) throws {
        try writeFile(path, text)
        guard chmod(path, 0o700) == 0 else {
            throw BenchError("cannot make \(path) executable: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes a text file.
    func writeFile(_ path: String, _ text: String) throws {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw BenchError("cannot write \(path): \(error.localizedDescription)")
        }
    }

    /// Removes the whole folder.
    func remove() {
        Self.removeTree(root)
    }

    /// Removes `path` and everything under it, trying again while it is still there: on Ctrl-C the
    /// interrupted run may be removing the same folder at the same moment as ``Interruption``, and
    /// each removal then stops at what the other took first.
    static func removeTree(_ path: String) {
        for _ in 0..<20 {
            try? FileManager.default.removeItem(atPath: path)
            guard FileManager.default.fileExists(atPath: path) else { return }
            usleep(10_000)
        }
    }
}

/// A failure that ends the benchmark with one line on stderr.
struct BenchError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Polls `condition` every `interval` seconds until it holds; throws after `timeout` seconds.
/// Benchmarks may poll: the waiting is never part of what is measured finer than `interval`.
func waitUntil(_ what: String, timeout: TimeInterval, interval: TimeInterval = 0.002,
               _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        if Date() >= deadline { throw BenchError("timed out after \(Int(timeout)) s waiting for \(what)") }
        usleep(useconds_t(interval * 1_000_000))
    }
}

extension LoopbackServer {
    /// Starts the loopback server a benchmark serves its downloads from.
    static func startForBenchmark() throws -> LoopbackServer {
        do {
            return try blockingAwait { try await LoopbackServer.start() }
        } catch {
            throw BenchError("cannot start the loopback server: \(error)")
        }
    }

    /// Stops it and its thread.
    func stopForBenchmark() {
        try? blockingAwait { await self.shutdown() }
    }
}
