import CLinuxSupport
import FoundationEssentials
import Synchronization
import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The file operations every writer and reader of the state directory uses.
///
/// Reads and writes never follow a symbolic link in the last path component, so a link planted in
/// the state directory cannot redirect a write (or leak a read) outside it. Writes are atomic:
/// a temporary file in the same directory is renamed over the target.
public enum StateFiles {
    /// No state file this program writes comes near this size; a larger one is foreign.
    public static let maximumFileSize = 16 << 20

    /// Reads a whole regular file, refusing oversized files and, unless `followingLinks` (config
    /// files, which people manage with symlinks), symbolic links. `vetting` may refuse the opened
    /// file by its `fstat` (config files must be the user's own: ``ConfigTrust``).
    public static func read(_ path: String, maximumSize: Int = maximumFileSize, followingLinks: Bool = false,
                            vetting: ((stat) throws(StateError) -> Void)? = nil) throws(StateError) -> Data {
        // RegularFile.open never blocks (a FIFO in place of a file) and refuses non-regular files.
        let fd = FileDescriptor(rawValue: try RegularFile.open(path, O_RDONLY, followingLinks: followingLinks))
        defer { try? fd.close() }
        var info = stat()
        guard fstat(fd.rawValue, &info) == 0 else {
            throw .system(operation: "cannot stat", path: path, errno: errno)
        }
        // On the descriptor: what is checked is what is read, even behind a link.
        try vetting?(info)
        if Int(info.st_size) > maximumSize { throw .tooLarge(path: path, bytes: Int(info.st_size)) }
        var data = Data(count: Int(info.st_size))
        var total = 0
        while true {
            if total == data.count { data.count += 4096 }
            let n = data.withUnsafeMutableBytes { buffer in
                Glibc.read(fd.rawValue, buffer.baseAddress! + total, buffer.count - total)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .system(operation: "cannot read", path: path, errno: errno)
            }
            if n == 0 { break }
            total += n
            if total > maximumSize { throw .tooLarge(path: path, bytes: total) }
        }
        data.count = total
        return data
    }

    /// Writes all of `data` to `fd`, through short writes and interruptions; at `offset` (with
    /// `pwrite`) when given, else at the file position. The one such loop of the programs.
    public static func writeAll(_ fd: Int32, _ data: Data, path: String, at offset: off_t? = nil) throws(StateError) {
        var failure: StateError?
        data.withUnsafeBytes { buffer in
            var done = 0
            while done < buffer.count {
                let pointer = buffer.baseAddress! + done
                let n = offset.map { pwrite(fd, pointer, buffer.count - done, $0 + off_t(done)) }
                    ?? Glibc.write(fd, pointer, buffer.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = .system(operation: "cannot write", path: path, errno: errno)
                    return
                }
                done += n
            }
        }
        if let failure { throw failure }
    }

    /// Writes `data` to `path` atomically: a temporary file beside it, then a rename.
    ///
    /// With `durable`, the file is fsynced before the rename and the directory after it, so the
    /// new contents survive a power cut once this returns. Without it, durability is left to a
    /// later file-system sync (the group commit's journal covers the file until its checkpoint).
    public static func write(_ data: Data, to path: String, durable: Bool) throws(StateError) {
        let temporary = temporaryPath(for: path)
        try create(data, at: temporary, durable: durable)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw .system(operation: "cannot rename into", path: path, errno: code)
        }
        if durable { try syncDirectory(directoryName(of: path)) }
    }

    /// Creates a new file at `path` (never replacing one, never through a link) holding `data`;
    /// with `durable`, fsynced before this returns. A failed write removes the partial file.
    public static func create(_ data: Data, at path: String, durable: Bool) throws(StateError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .system(operation: "cannot create", path: path, errno: errno) }
        var failure: StateError?
        do throws(StateError) {
            try writeAll(fd, data, path: path)
        } catch {
            failure = error
        }
        if failure == nil, durable, fsync(fd) != 0 { failure = .system(operation: "cannot sync", path: path, errno: errno) }
        if close(fd) != 0, failure == nil { failure = .system(operation: "cannot close", path: path, errno: errno) }
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// fsyncs a directory so that renames and unlinks in it are durable.
    public static func syncDirectory(_ path: String) throws(StateError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(operation: "cannot open directory", path: path, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .system(operation: "cannot sync directory", path: path, errno: errno) }
    }

    /// Makes everything written to the file system holding `path` durable, in one call.
    public static func syncFileSystem(containing path: String) throws(StateError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system(operation: "cannot open directory", path: path, errno: errno) }
        defer { close(fd) }
        guard bg_syncfs(fd) == 0 else { throw .system(operation: "cannot sync file system of", path: path, errno: errno) }
    }

    /// Creates `path` (mode 0700) if missing; refuses a symbolic link or a non-directory there.
    public static func ensureDirectory(_ path: String) throws(StateError) {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        guard code == EEXIST else { throw .system(operation: "cannot create directory", path: path, errno: code) }
        var info = stat()
        guard lstat(path, &info) == 0 else { throw .system(operation: "cannot stat", path: path, errno: errno) }
        if info.st_mode & S_IFMT == S_IFLNK { throw .symbolicLink(path) }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw .unsafeDirectory("\(path) exists and is \(RegularFile.name(ofKind: info.st_mode)), not a directory")
        }
    }

    /// Removes a file; a file that is already gone is not an error.
    public static func remove(_ path: String) throws(StateError) {
        if unlink(path) != 0, errno != ENOENT {
            throw .system(operation: "cannot remove", path: path, errno: errno)
        }
    }

    /// Moves a file within the state directory (same file system), replacing any file at `target`.
    public static func move(_ source: String, to target: String) throws(StateError) {
        guard rename(source, target) == 0 else {
            throw .system(operation: "cannot move \(source) to", path: target, errno: errno)
        }
    }

    /// The names in a directory, without dot-files (temporary files start with a dot); empty when
    /// the directory does not exist.
    ///
    /// Unless `followingLinks` (config folders), a symbolic link in place of the directory is
    /// refused rather than listed: a per-app folder linked elsewhere must not bring files from
    /// outside the state directory into it. Anything else that is not a directory is named.
    public static func names(in path: String, followingLinks: Bool = false) throws(StateError) -> [String] {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC | (followingLinks ? 0 : O_NOFOLLOW))
        guard fd >= 0, let dir = fdopendir(fd) else {
            let code = errno
            if fd >= 0 { close(fd) }
            if code == ENOENT { return [] }
            // With O_DIRECTORY, Linux reports a link as ENOTDIR rather than ELOOP.
            let kind = RegularFile.kind(at: path, followingLinks: followingLinks)
            if code == ELOOP || kind == "a symbolic link", !followingLinks { throw .symbolicLink(path) }
            if code == ENOTDIR, let kind {
                throw .unsafeDirectory("\(path) is \(kind), not a directory")
            }
            if code == ENOTDIR { throw .unsafeDirectory("\(path) is a regular file, not a directory") }
            throw .system(operation: "cannot list", path: path, errno: code)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name.hasPrefix(".") { continue }
            names.append(name)
        }
        return names.sorted()
    }

    /// Whether a file or directory exists at `path` (a dangling link counts as existing).
    public static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Which file or folder is at `path` (device and inode, the link itself for a link), or `nil`
    /// when nothing is there: what a watch follows, where a name can be given to another folder.
    public static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The size of a regular file, or `nil` when it does not exist.
    public static func size(of path: String) -> Int? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Int(info.st_size)
    }

    /// The folder part of a path.
    public static func directoryName(of path: String) -> String {
        // The last "/" byte, as the kernel reads the path (see PathText): a "/" that a combining
        // mark follows is no "/" to String.
        let bytes = path.utf8
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        return slash == bytes.startIndex ? "/" : String(decoding: bytes[..<slash], as: UTF8.self)
    }

    private static let temporaryCounter = Atomic<UInt64>(0)

    private static func temporaryPath(for path: String) -> String {
        let directory = directoryName(of: path)
        // After the last "/" byte, as directoryName cuts (a "/" with a combining mark is no "/" to String).
        let bytes = path.utf8
        let name = String(decoding: bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes[bytes.index(after: $0)...] } ?? bytes[...], as: UTF8.self)
        return "\(directory)/.\(name).\(getpid()).\(temporaryCounter.add(1, ordering: .relaxed).newValue).tmp"
    }
}
