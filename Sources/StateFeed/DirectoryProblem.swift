import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What keeps a state directory from being shown, in one line: it does not exist yet, or it
/// cannot be read. `nil` when it can be read.
public enum DirectoryProblem {
    public static func describe(_ root: String) -> String? {
        var info = stat()
        if lstat(root, &info) != 0 {
            return errno == ENOENT ? "state directory \(root) does not exist yet: start bgtaskd"
                                   : "cannot read \(root): \(String(cString: strerror(errno)))"
        }
        if access(root, R_OK | X_OK) != 0 {
            return "cannot read \(root): \(String(cString: strerror(errno)))"
        }
        return nil
    }
}
