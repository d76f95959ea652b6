import FoundationEssentials

/// What `bgctl install` put under a prefix and in the unit directory, kept under the prefix
/// (`share/bgtop/installed-files`) so that `bgctl uninstall` removes exactly that.
///
/// One entry a line, `file PATH` or `directory PATH` (absolute); directories are the ones install
/// created, removed only when empty again. Lines starting with `#` are comments.
struct InstalledFiles: Equatable {
    var files: [String] = []
    var directories: [String] = []

    var text: String {
        var lines = ["# Written by bgctl install: what it put here. bgctl uninstall removes exactly these;",
                     "# directories it created go only once they are empty."]
        lines += directories.map { "directory \($0)" }
        lines += files.map { "file \($0)" }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Reads a list; `nil` when there is none at `path`.
    static func read(_ path: String) throws -> InstalledFiles? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw InstallFailure("cannot read \(path)")
        }
        var list = InstalledFiles()
        for (index, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") {
            if line.hasPrefix("file /") {
                list.files.append(String(line.dropFirst("file ".count)))
            } else if line.hasPrefix("directory /") {
                list.directories.append(String(line.dropFirst("directory ".count)))
            } else {
                throw InstallFailure("\(path) line \(index + 1) is neither 'file /PATH' nor 'directory /PATH'")
            }
        }
        return list
    }

    /// This list with `other`'s entries added (an earlier install's, so that what it created is
    /// still removed by uninstall).
    func merged(with other: InstalledFiles) -> InstalledFiles {
        var merged = self
        for file in other.files where !merged.files.contains(file) { merged.files.append(file) }
        for directory in other.directories where !merged.directories.contains(directory) { merged.directories.append(directory) }
        merged.files.sort()
        merged.directories.sort()
        return merged
    }
}
