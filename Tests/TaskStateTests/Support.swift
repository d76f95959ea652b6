import Foundation
import Testing
import TaskState
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

/// A fixed instant with millisecond precision, so that it survives the JSON round trip.
let referenceDate = Date(timeIntervalSince1970: 1_795_341_600) // 2026-11-22T10:00:00Z

/// A fresh, uniquely named directory under the system temporary directory, removed after `body`.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("bgtop-taskstate-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: path) }
    return try body(path)
}

/// Every entry in a directory, dot-files included.
func allEntries(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

/// The permission bits of a file or directory (not following a link).
func permissions(_ path: String) -> mode_t {
    var info = stat()
    guard lstat(path, &info) == 0 else { return 0o7777 }
    return info.st_mode & 0o777
}

/// Writes `text` to `path` with plain Foundation (not the code under test).
func writeText(_ text: String, to path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}
