#if canImport(Glibc)
import Glibc
#endif

/// Creates a directory and whatever is missing above it, as `mkdir -p` would, but says plainly
/// which part is in the way when one is: a fresh account has no `~/.config` or `~/.local/state`,
/// and a file or a dangling link where a folder should be must be one clear line, not `ENOENT`
/// from the last `mkdir`.
public enum DirectoryCreation {
    /// Walks `path` from the root: each missing part is created, the parents with `parentMode`
    /// and `path` itself with `mode` (both less the umask). A part that is a link to a directory is
    /// followed (a linked `~/.config` is common); a link to nothing or to something else, or a part
    /// that is not a directory, stops it with an error naming that part. `what` names `path` in
    /// the error (`config directory`).
    public static func create(_ path: String, mode: mode_t, parentMode: mode_t, named what: String) throws(StateError) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        var prefix = path.hasPrefix("/") ? "" : "."
        for (index, part) in parts.enumerated() {
            prefix += "/" + part
            let isLast = index == parts.count - 1
            if let problem = try ensure(prefix, mode: isLast ? mode : parentMode) {
                throw .unsafeDirectory("cannot create \(what) \(path): \(problem)")
            }
        }
    }

    /// Makes `part` a directory if it is missing; the reason it cannot be one, or `nil`.
    private static func ensure(_ part: String, mode: mode_t) throws(StateError) -> String? {
        var info = stat()
        if lstat(part, &info) != 0 {
            guard errno == ENOENT else { throw .system(operation: "cannot stat", path: part, errno: errno) }
            if mkdir(part, mode) == 0 { return nil }
            let code = errno
            // Made by someone else meanwhile: judge what is there now.
            guard code == EEXIST, lstat(part, &info) == 0 else {
                throw .system(operation: "cannot create directory", path: part, errno: code)
            }
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            return nil
        case S_IFLNK:
            let target = linkTarget(part)
            var followed = stat()
            guard stat(part, &followed) == 0 else {
                return "\(part) is a symbolic link to \(target), which does not exist; make it a directory or point it at one"
            }
            guard followed.st_mode & S_IFMT == S_IFDIR else {
                return "\(part) is a symbolic link to \(target), which is \(RegularFile.name(ofKind: followed.st_mode)), not a directory"
            }
            return nil
        default:
            return "\(part) is \(RegularFile.name(ofKind: info.st_mode)), not a directory"
        }
    }

    private static func linkTarget(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return "?" }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
