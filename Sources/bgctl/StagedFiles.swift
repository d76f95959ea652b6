import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Files written all or nothing: every file goes to a temporary name beside its target first
/// (created with the folders it needs), and only when all are written and synced are they renamed
/// into place. A failure before that (a read-only prefix, a full disk) removes the temporary files
/// and the folders made for them, leaving the tree as it was.
struct StagedFiles {
    struct File {
        var path: String
        var contents: Data
        var mode: mode_t
    }

    private(set) var files: [File] = []

    mutating func add(_ path: String, _ contents: Data, mode: mode_t = 0o644) {
        files.append(File(path: path, contents: contents, mode: mode))
    }

    /// The folders the files (and `others`, such as the last file of ``commit(creating:lastFile:)``)
    /// need that do not exist yet, parents first.
    func missingDirectories(alsoFor others: [String] = []) -> [String] {
        var missing: [String] = []
        for folder in Set((files.map(\.path) + others).map { PathText.parent($0) }).sorted() {
            var chain: [String] = []
            var current = folder
            while !current.isEmpty, current != "/", !FileManager.default.fileExists(atPath: current) {
                chain.insert(current, at: 0)
                current = PathText.parent(current)
            }
            for directory in chain where !missing.contains(directory) { missing.append(directory) }
        }
        return missing.sorted { $0.count < $1.count }
    }

    /// Creates `directories` (from ``missingDirectories()``), writes every file under a temporary
    /// name, then renames them all into place. `lastFile`, given the folders created, is written
    /// the same way and renamed last (the list of installed files).
    func commit(creating directories: [String], lastFile: ([String]) -> File) throws {
        var created: [String] = []
        var temporaries: [String] = []
        func undo() {
            for path in temporaries { unlink(path) }
            for directory in created.reversed() { rmdir(directory) }
        }
        do {
            for directory in directories {
                if mkdir(directory, 0o755) == 0 {
                    created.append(directory)
                } else if errno != EEXIST {
                    throw InstallFailure("cannot create \(directory): \(String(cString: strerror(errno)))")
                }
            }
            let all = files + [lastFile(created)]
            for file in all {
                temporaries.append(try Self.writeTemporary(file))
            }
            for (file, temporary) in zip(all, temporaries) {
                guard rename(temporary, file.path) == 0 else {
                    throw InstallFailure("cannot rename \(temporary) to \(file.path): \(String(cString: strerror(errno)))")
                }
            }
            temporaries.removeAll()
            for folder in Set(all.map { PathText.parent($0.path) }) {
                try? StateFiles.syncDirectory(folder)
            }
        } catch {
            undo()
            throw error
        }
    }

    /// Writes `file` to `.NAME.bgctl-install-PID` beside it, synced, with its mode; returns that name.
    private static func writeTemporary(_ file: File) throws -> String {
        let folder = PathText.parent(file.path)
        let name = PathText.lastComponent(file.path)
        let temporary = "\(folder)/.\(name).bgctl-install-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, file.mode)
        guard descriptor >= 0 else {
            throw InstallFailure("cannot write \(file.path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        do {
            try StateFiles.writeAll(descriptor, file.contents, path: temporary)
        } catch {
            unlink(temporary)
            throw InstallFailure("cannot write \(file.path): \(error)")
        }
        // The umask must not take execute bits from a program, and fsync before the rename.
        guard fchmod(descriptor, file.mode) == 0, fsync(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw InstallFailure("cannot write \(file.path): \(reason)")
        }
        return temporary
    }
}
