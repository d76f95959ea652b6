import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// What a manifest's `executable` must be before the scheduler will run it: an absolute path
/// without NUL naming a regular file the user may execute, owned by the user or root and
/// writable by no one else (``ConfigTrust``).
public enum ExecutableCheck {
    /// Why `executable` cannot be run, as one line naming it; `nil` when it can.
    public static func problem(_ executable: String, user: uid_t = geteuid()) -> String? {
        // C sees only what comes before a NUL: "/bin/sh\0junk" would pass every check below as
        // "/bin/sh" while the manifest says something else. Shown as \0 so the line stays printable.
        if executable.utf8.contains(0) {
            return "executable '\(executable.replacing("\0", with: "\\0"))' contains a NUL byte"
        }
        guard executable.hasPrefix("/") else {
            return "executable '\(executable)' is not an absolute path"
        }
        var info = stat()
        // stat, not lstat: /usr/bin/python3 and the like are links, and what runs is the target.
        guard stat(executable, &info) == 0 else {
            return "executable '\(executable)' is missing or not executable"
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            // access(X_OK) passes for a directory; running one fails only at launch time.
            return "executable '\(executable)' is \(RegularFile.name(ofKind: info.st_mode)), not a regular file"
        }
        if let problem = ConfigTrust.problem(owner: info.st_uid, mode: info.st_mode, user: user, path: executable) {
            return "executable '\(executable)' \(problem)"
        }
        guard access(executable, X_OK) == 0 else {
            return "executable '\(executable)' is missing or not executable"
        }
        return nil
    }
}
