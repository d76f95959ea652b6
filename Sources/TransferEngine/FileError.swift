import TransferCore
#if canImport(Glibc)
import Glibc
#endif

/// Turns the `errno` of a failed file call into a ``TransferFailure``: a full disk is its own case.
func fileFailure(_ path: String, _ code: Int32 = errno) -> TransferFailure {
    if code == ENOSPC || code == EDQUOT { return .diskFull(path: path) }
    return .fileSystem(path: path, reason: String(cString: strerror(code)))
}

/// `realpath(3)`, or `nil` when the path does not resolve.
func resolvedPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

/// What `lstat(2)` says is at `path`, without following a final symlink.
enum FileKind: Equatable {
    case missing, directory, regular, symlink, other
}

func fileKind(_ path: String) -> FileKind {
    var info = stat()
    guard lstat(path, &info) == 0 else { return .missing }
    switch info.st_mode & S_IFMT {
    case S_IFDIR: return .directory
    case S_IFREG: return .regular
    case S_IFLNK: return .symlink
    default: return .other
    }
}

/// fsync of a directory, so that a rename in it survives a crash.
func syncDirectory(_ path: String) throws(TransferFailure) {
    let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { throw fileFailure(path) }
    defer { close(descriptor) }
    guard fsync(descriptor) == 0 else { throw fileFailure(path) }
}

/// The folder part of a path (`/a/b` → `/a`, `/a` → `/`).
func parentFolder(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
}
