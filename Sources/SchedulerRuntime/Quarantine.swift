import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Moves unusable files out of the way, keeping them for a person to look at.
///
/// Quarantine only ever renames something that lies inside the state directory through real
/// directories: a per-app folder that is a symbolic link is moved as the link itself, and a
/// path through such a link is refused, so a file outside the state directory is never moved.
struct Quarantine {
    let paths: StatePaths

    /// Moves `path` into `quarantine/` under a name that records when and where it came from, and
    /// writes the reason beside it. Returns the new path.
    func isolate(_ path: String, reason: String, now: Date) throws -> String {
        let relative = try containedRelativePath(path)
        try StateFiles.ensureDirectory(paths.quarantine)
        let stamp = JSONFormat.string(from: now).replacingLiterally(":", with: "")
        let flat = relative.replacingLiterally("/", with: "__")
        var target = "\(paths.quarantine)/\(stamp)-\(flat)"
        var suffix = 1
        while StateFiles.exists(target) {
            suffix += 1
            target = "\(paths.quarantine)/\(stamp)-\(suffix)-\(flat)"
        }
        try StateFiles.move(path, to: target)
        try StateFiles.write(Data("\(line(for: path, reason: reason))\n".utf8), to: "\(target).reason", durable: false)
        return target
    }

    /// The one line that says which file and why: `<relative path>: <reason>`, with the state
    /// directory's own prefix taken out of the reason (and the path not repeated when the reason
    /// already starts with it).
    func line(for path: String, reason: String) -> String {
        let relative = insideRoot(path) ?? path
        let local = reason.replacingLiterally(paths.root + "/", with: "")
        return local.hasPrefix(relative) ? local : "\(relative): \(local)"
    }

    /// `path` relative to the state directory, when it starts with the state directory's path.
    ///
    /// Paths are compared and cut as bytes, as the kernel reads them: to `String`, a `/` followed by
    /// a combining mark is one `Character` with it and neither a prefix's end nor a separator, so a
    /// folder on the way (a symbolic link, say) would go unchecked.
    private func insideRoot(_ path: String) -> String? {
        let prefix = Array((paths.root + "/").utf8)
        guard path.utf8.starts(with: prefix) else { return nil }
        return String(decoding: path.utf8.dropFirst(prefix.count), as: UTF8.self)
    }

    /// `path` relative to the state directory, when every folder on the way is a real directory.
    private func containedRelativePath(_ path: String) throws(StateError) -> String {
        guard let relative = insideRoot(path) else {
            throw .unsafeDirectory("\(path) is outside the state directory \(paths.root); not moved")
        }
        let parts = relative.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard !parts.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw .unsafeDirectory("\(relative) is not a plain path inside the state directory; not moved")
        }
        var folder = paths.root
        for part in parts.dropLast() {
            folder += "/\(part)"
            var info = stat()
            guard lstat(folder, &info) == 0 else { throw .system(operation: "cannot stat", path: folder, errno: errno) }
            guard info.st_mode & S_IFMT == S_IFDIR else {
                let kind = RegularFile.name(ofKind: info.st_mode)
                throw .unsafeDirectory("\(folder) is \(kind), not a directory; \(relative) is not moved, since it may lie outside the state directory")
            }
        }
        return relative
    }
}
