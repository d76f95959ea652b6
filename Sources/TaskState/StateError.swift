/// Failures reading or writing the state directory, each with a message a person can act on.
public enum StateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call failed: what was being done, the path, and the errno text.
    case system(operation: String, path: String, errno: Int32)
    /// A file's contents could not be decoded.
    case malformed(String)
    /// A path that should be a regular file or directory is a symbolic link.
    case symbolicLink(String)
    /// The state directory is not safe to use.
    case unsafeDirectory(String)
    /// A file is larger than any file this program writes.
    case tooLarge(path: String, bytes: Int)
    /// A path that must be a regular file is something else (`kind`: "a FIFO", "a directory", ...).
    case notRegularFile(path: String, kind: String)
    /// A config file or directory (or a manifest's program) that others could have changed
    /// (``ConfigTrust``): the message names it, what is wrong and the fix.
    case untrusted(String)

    public var description: String {
        switch self {
        case .system(let operation, let path, let code):
            return "\(operation) \(path): \(String(cString: strerror(code)))"
        case .malformed(let reason):
            return reason
        case .symbolicLink(let path):
            return "\(path) is a symbolic link; refusing to follow it"
        case .unsafeDirectory(let reason):
            return reason
        case .tooLarge(let path, let bytes):
            return "\(path) is \(bytes) bytes, larger than any state file"
        case .notRegularFile(let path, let kind):
            return "\(path) is \(kind), not a regular file"
        case .untrusted(let reason):
            return reason
        }
    }

    /// Whether the failure was the disk running out of space.
    public var isNoSpace: Bool {
        if case .system(_, _, let code) = self { return code == ENOSPC || code == EDQUOT }
        return false
    }
}

#if canImport(Glibc)
import Glibc
#endif
