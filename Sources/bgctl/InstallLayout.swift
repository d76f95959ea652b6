import FoundationEssentials

/// Where `bgctl install` puts each file: programs, completions and manual pages under a prefix
/// (the usual `bin/` and `share/` tree), the systemd user unit in a unit directory.
struct InstallLayout {
    /// The programs installed, each with its completions and manual page.
    static let programs = ["bgtaskd", "bgctl", "bgtop"]

    /// A shell whose completion script swift-argument-parser writes, and where each looks for it.
    enum Shell: String, CaseIterable {
        case bash, zsh, fish

        /// The folder under the prefix, and the file name the shell looks for.
        func place(for program: String) -> (folder: String, name: String) {
            switch self {
            case .bash: return ("share/bash-completion/completions", program)
            case .zsh: return ("share/zsh/site-functions", "_\(program)")
            case .fish: return ("share/fish/vendor_completions.d", "\(program).fish")
            }
        }
    }

    /// Absolute, without a trailing slash.
    let prefix: String
    let unitDirectory: String

    init(prefix: String?, unitDirectory: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        self.prefix = try Self.absolute(prefix ?? "\(home)/.local", what: "--prefix")
        let configHome = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "\(home)/.config"
        self.unitDirectory = try Self.absolute(unitDirectory ?? "\(configHome)/systemd/user", what: "--unit-dir")
    }

    func binary(_ program: String) -> String { "\(prefix)/bin/\(program)" }

    func completion(_ program: String, _ shell: Shell) -> String {
        let place = shell.place(for: program)
        return "\(prefix)/\(place.folder)/\(place.name)"
    }

    func manualPage(_ program: String) -> String { "\(prefix)/share/man/man1/\(program).1" }

    /// The list of what install put where (``InstalledFiles``).
    var manifest: String { "\(prefix)/share/bgtop/installed-files" }

    var unit: String { "\(unitDirectory)/\(ServiceUnit.fileName)" }

    /// `path` made absolute against the working directory, `.` and `..` resolved, no trailing slash.
    static func absolute(_ path: String, what: String) throws -> String {
        guard !path.isEmpty else { throw InstallFailure("\(what) is empty", exitCode: BGCtl.Exit.usage) }
        // The list of installed files has one path a line.
        guard !path.contains("\n"), !path.contains("\0") else {
            throw InstallFailure("\(what) must not contain a newline or NUL", exitCode: BGCtl.Exit.usage)
        }
        let base = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let standardized = URL(fileURLWithPath: base).standardizedFileURL.path
        return standardized.count > 1 && standardized.hasSuffix("/") ? String(standardized.dropLast()) : standardized
    }
}
