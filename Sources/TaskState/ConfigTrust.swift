import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// sshd's StrictModes for the config directory: what the scheduler reads there (the directory,
/// `apps/`, every manifest, `settings.json`) and the programs manifests name decide what runs as
/// the user, so each must be owned by that user (or root) and writable by no one else.
///
/// Without it, anyone who can write a manifest, or the folder that holds manifests, or a
/// manifest's program, can make the scheduler run a program of their choosing as this user.
/// Read access by others is allowed: nothing in the config directory is secret.
public enum ConfigTrust {
    /// Why a file or directory with this `owner` and `mode` cannot be trusted by `user`, as the
    /// rest of a sentence whose subject names the thing ("is owned by uid 65534, not by you (uid 0)
    /// or root"); `nil` when it can. `path` goes into the suggested fix.
    public static func problem(owner: uid_t, mode: mode_t, user: uid_t = geteuid(), path: String) -> String? {
        // Root may own it: root can change anything of the user's anyway (sshd allows it too).
        if owner != user && owner != 0 {
            return "is owned by uid \(owner), not by you (uid \(user)) or root"
        }
        // Group-writable is refused even for a personal group: whoever is in it could edit it.
        if mode & 0o022 != 0 {
            return "is writable by group or others (mode \(octal(mode))); run: chmod go-w \(path)"
        }
        return nil
    }

    /// Refuses `path`, a directory of the config, unless it is trusted; `what` names it in the
    /// message ("config directory"). A missing directory passes: the scheduler creates it 0700.
    /// A symbolic link is followed (people keep their config elsewhere), and the target is checked.
    public static func checkDirectory(_ path: String, named what: String) throws(StateError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw .system(operation: "cannot stat", path: path, errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .untrusted("\(what) \(path) is \(RegularFile.name(ofKind: info.st_mode)), not a directory")
        }
        if let problem = problem(owner: info.st_uid, mode: info.st_mode, path: path) {
            throw .untrusted("\(what) \(path) \(problem)")
        }
    }

    /// A check for ``StateFiles/read(_:maximumSize:followingLinks:vetting:)``: refuses the opened
    /// file (not its name, which a link could point elsewhere between a check and the open)
    /// unless it is trusted.
    public static func vetFile(_ path: String) -> (stat) throws(StateError) -> Void {
        { (info: stat) throws(StateError) -> Void in
            if let problem = problem(owner: info.st_uid, mode: info.st_mode, path: path) {
                throw .untrusted("\(path) \(problem)")
            }
        }
    }

    /// The permission bits as `chmod` takes them: `0777`.
    static func octal(_ mode: mode_t) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
