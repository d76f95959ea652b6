import FoundationEssentials
import Glibc
import TaskState

/// Finds themes by name or path.
///
/// `load(_:)` takes either a path or a name:
/// - A value containing `/` or ending in `.theme` is a path to a theme file (a leading `~/` is the
///   home directory). A bare `NAME.theme` that is not in the current directory is also looked for
///   by file name in the search directories.
/// - Otherwise it is a name, and `NAME.theme` is looked for in the search directories, first found
///   wins. `defaultSearchDirectories(environment:executablePath:)` gives, in order:
///   1. `$XDG_CONFIG_HOME/bgtop/themes` (default `~/.config/bgtop/themes`): the user's own themes;
///   2. `<prefix>/share/bgtop/themes`, where prefix is the executable's parent's parent
///      (`/usr/local/bin/bgtop` → `/usr/local/share/bgtop/themes`): installed themes;
///   3. the package's top-level `Themes/` folder, found by walking up from the executable to a
///      folder holding both `Package.swift` and `Themes/` (so `swift run bgtop` finds them).
///   After the directories come the compiled-in themes `default` and `monochrome` (also `mono`).
///
/// An unknown name is an error listing the available names; a broken file is its parse error.
public struct ThemeCatalog: Sendable {
    public let searchDirectories: [String]

    /// Theme files are small; anything bigger is not a theme.
    static let maximumFileSize = 1 << 20

    public init(searchDirectories: [String]) {
        self.searchDirectories = searchDirectories
    }

    /// The search directories in the order `load(_:)` tries them (see the type's documentation).
    /// `executablePath` is best the running binary's absolute path (`Bundle.main.executablePath`);
    /// `argv[0]` works too: a bare name is looked up in `$PATH`, a relative one taken from the
    /// current directory.
    /// The XDG and share directories are listed whether or not they exist; the package folder only
    /// when one is found. When the executable is reached through a symbolic link, the share and
    /// package folders of the link's target are tried after those of the link.
    public static func defaultSearchDirectories(environment: [String: String], executablePath: String) -> [String] {
        var directories: [String] = []
        func add(_ directory: String) {
            if !directories.contains(directory) { directories.append(directory) }
        }
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            add(join(config, "bgtop/themes"))
        } else if let home = environment["HOME"], home.hasPrefix("/") {
            add(join(home, ".config/bgtop/themes"))
        }
        let executables = executableCandidates(executablePath, searchPath: environment["PATH"] ?? "")
        for executable in executables {
            let prefix = parent(parent(executable))
            add(join(prefix, "share/bgtop/themes"))
        }
        for executable in executables {
            if let package = packageThemesDirectory(above: executable) { add(package) }
        }
        return directories
    }

    /// The theme called `nameOrPath`, or why not.
    public func load(_ nameOrPath: String) -> Result<Theme, ThemeError> {
        if nameOrPath.contains("/") || nameOrPath.hasSuffix(".theme") {
            let path = ThemeCatalog.expandingTilde(nameOrPath)
            if nameOrPath.contains("/") || FileManager.default.fileExists(atPath: path) {
                return ThemeCatalog.loadFile(path)
            }
            return loadNamed(String(nameOrPath.dropLast(".theme".count)), asked: nameOrPath)
        }
        return loadNamed(nameOrPath, asked: nameOrPath)
    }

    /// The names `load(_:)` accepts: the compiled-in themes and every `*.theme` file in the search
    /// directories, sorted, each once.
    public func availableNames() -> [String] {
        var names: Set<String> = ["default", "monochrome"]
        for directory in searchDirectories {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            for entry in entries where entry.hasSuffix(".theme") && entry.count > ".theme".count {
                names.insert(String(entry.dropLast(".theme".count)))
            }
        }
        return names.sorted()
    }

    /// Reads and parses one theme file; the theme is named after the file.
    public static func loadFile(_ path: String) -> Result<Theme, ThemeError> {
        let name = themeName(forPath: path)
        func unreadable(_ why: String) -> Result<Theme, ThemeError> {
            .failure(ThemeError(theme: name, path: path, reason: .unreadable(why)))
        }
        // A theme may be a link (a dotfiles folder): what it points at is checked, on the opened
        // descriptor, without blocking on a FIFO.
        let data: Data
        do {
            data = try StateFiles.read(path, maximumSize: maximumFileSize, followingLinks: true)
        } catch {
            switch error {
            case .system(_, _, let code) where code == ENOENT: return unreadable("no such file")
            case .notRegularFile(_, "a directory"): return unreadable("is a directory, not a theme file")
            case .notRegularFile: return unreadable("not a regular file")
            case .tooLarge(_, let bytes): return unreadable("too big for a theme file (\(bytes) bytes)")
            default: return unreadable("cannot be read (permission denied?)")
            }
        }
        guard let text = String(data: data, encoding: .utf8) else { return unreadable("not UTF-8 text") }
        return ThemeFile.parse(text, name: name, path: path)
    }

    // MARK: - Internals

    private func loadNamed(_ name: String, asked: String) -> Result<Theme, ThemeError> {
        if !name.isEmpty {
            for directory in searchDirectories {
                let path = ThemeCatalog.join(directory, name + ".theme")
                if FileManager.default.fileExists(atPath: path) { return ThemeCatalog.loadFile(path) }
            }
            switch name.lowercased() {
            case "default": return .success(.builtInDefault)
            case "monochrome", "mono": return .success(.monochrome)
            default: break
            }
        }
        return .failure(ThemeError(theme: asked, reason: .unknownTheme(available: availableNames())))
    }

    private static func themeName(forPath path: String) -> String {
        let file = URL(fileURLWithPath: path).lastPathComponent
        return file.hasSuffix(".theme") && file.count > ".theme".count ? String(file.dropLast(".theme".count)) : file
    }

    /// `~` and `~/…` as the home directory, `~user/…` as that user's, as a shell expands them.
    static func expandingTilde(_ path: String) -> String {
        guard path.hasPrefix("~") else { return path }
        let slash = path.firstIndex(of: "/") ?? path.endIndex
        let user = String(path[path.index(after: path.startIndex)..<slash])
        let home: String?
        if user.isEmpty, let value = getenv("HOME"), value.pointee != 0 {
            home = String(cString: value)
        } else {
            let entry = user.isEmpty ? getpwuid(getuid()) : getpwnam(user)
            home = entry.flatMap { $0.pointee.pw_dir }.map { String(cString: $0) }
        }
        guard let home else { return path }
        return home + path[slash...]
    }

    private static func join(_ directory: String, _ component: String) -> String {
        directory.hasSuffix("/") ? directory + component : directory + "/" + component
    }

    private static func parent(_ path: String) -> String {
        let cut = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        guard let slash = cut.lastIndex(of: "/") else { return "/" }
        let result = String(cut[..<slash])
        return result.isEmpty ? "/" : result
    }

    /// The executable's absolute path as given (a bare name, as in `argv[0]` after a `$PATH`
    /// search, is looked up in `searchPath`), then with symbolic links resolved if that differs.
    private static func executableCandidates(_ executablePath: String, searchPath: String) -> [String] {
        guard !executablePath.isEmpty else { return [] }
        var absolute = executablePath
        if !executablePath.contains("/") {
            let directories = searchPath.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
            guard let found = directories.map({ join($0, executablePath) })
                .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return [] }
            absolute = found
        } else if !executablePath.hasPrefix("/") {
            absolute = join(FileManager.default.currentDirectoryPath, executablePath)
        }
        let lexical = lexicallyNormalized(absolute)
        let resolved = URL(fileURLWithPath: lexical).resolvingSymlinksInPath().path
        return resolved == lexical ? [lexical] : [lexical, resolved]
    }

    /// `.` and `..` removed without touching the file system (Foundation's `standardizingPath`
    /// also resolves symbolic links on Linux, which would lose the link's own location).
    private static func lexicallyNormalized(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/") where component != "." {
            if component == ".." { _ = components.popLast() } else { components.append(component) }
        }
        return "/" + components.joined(separator: "/")
    }

    /// The nearest folder above `executable` holding `Package.swift` and a `Themes/` folder.
    private static func packageThemesDirectory(above executable: String) -> String? {
        var directory = parent(executable)
        while true {
            let themes = join(directory, "Themes")
            var info = stat()
            if FileManager.default.fileExists(atPath: join(directory, "Package.swift")),
               stat(themes, &info) == 0, info.st_mode & S_IFMT == S_IFDIR {
                return themes
            }
            if directory == "/" { return nil }
            directory = parent(directory)
        }
    }
}
