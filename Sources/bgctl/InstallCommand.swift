import ArgumentParser
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgctl install`: the programs, their completions and manual pages under a prefix, and a
/// systemd user unit for `bgtaskd`.
struct Install: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "install",
        abstract: "Install bgtaskd, bgctl and bgtop with completions, man pages and a systemd user unit.",
        discussion: """
        Copies the three programs from the folder this bgctl runs from (a release or a debug build) into PREFIX/bin, \
        writes bash, zsh and fish completions and man pages under PREFIX/share, and the user unit bgtaskd.service \
        (Type=notify) into the unit folder. All or nothing: files are written under temporary names and renamed \
        into place once all are written. What was installed is listed in PREFIX/share/bgtop/installed-files, \
        which bgctl uninstall reads. The state and config directories are not touched.
        """)

    @Option(name: .long, help: ArgumentHelp("Where to install (default: ~/.local).", valueName: "dir"))
    var prefix: String?

    @Option(name: .customLong("unit-dir"), help: ArgumentHelp(
        "Where to write bgtaskd.service (default: $XDG_CONFIG_HOME/systemd/user, else ~/.config/systemd/user).", valueName: "dir"))
    var unitDirectory: String?

    @Flag(name: .long, help: "Replace a bgtaskd.service that differs from the one this install writes.")
    var force = false

    @Flag(name: .long, help: "Then run systemctl --user daemon-reload and systemctl --user enable --now bgtaskd.")
    var enable = false

    func run() throws {
        do {
            try install()
        } catch let failure as InstallFailure {
            printError(failure.description)
            throw failure.exitCode
        }
    }

    private func install() throws {
        let layout = try InstallLayout(prefix: prefix, unitDirectory: unitDirectory)
        let source = try Self.programFolder()
        if let problem = ServiceUnit.problem(withExecutable: layout.binary("bgtaskd")) {
            throw InstallFailure("bad --prefix: \(problem)", exitCode: BGCtl.Exit.usage)
        }
        let unit = ServiceUnit(executable: layout.binary("bgtaskd")).text
        // Before anything is written: a unit the user changed is theirs until --force.
        if let existing = try? String(contentsOfFile: layout.unit, encoding: .utf8), existing != unit, !force {
            throw InstallFailure("\(layout.unit) exists and differs from the unit this install writes; --force replaces it",
                                 exitCode: BGCtl.Exit.refused)
        }
        var staged = StagedFiles()
        let now = Date()
        for program in InstallLayout.programs {
            let executable = "\(source)/\(program)"
            guard let contents = FileManager.default.contents(atPath: executable) else {
                throw InstallFailure("cannot read \(executable)")
            }
            staged.add(layout.binary(program), contents, mode: 0o755)
            for shell in InstallLayout.Shell.allCases {
                staged.add(layout.completion(program, shell), try ToolRun.output(of: executable, ["--generate-completion-script", shell.rawValue]))
            }
            let page = ManualPage(help: try ToolHelp.of(executable), date: now)
            staged.add(layout.manualPage(program), Data(page.text.utf8))
        }
        staged.add(layout.unit, Data(unit.utf8))
        let earlier = try? InstalledFiles.read(layout.manifest)
        let installedPaths = staged.files.map(\.path) + [layout.manifest]
        try staged.commit(creating: staged.missingDirectories(alsoFor: [layout.manifest])) { created in
            var list = InstalledFiles(files: installedPaths.sorted(), directories: created.sorted())
            if let earlier { list = list.merged(with: earlier) }
            return StagedFiles.File(path: layout.manifest, contents: Data(list.text.utf8), mode: 0o644)
        }
        print("installed bgtaskd, bgctl and bgtop in \(layout.prefix)/bin, with completions and man pages in \(layout.prefix)/share")
        print("wrote \(layout.unit)")
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        if !path.contains("\(layout.prefix)/bin") { print("note: \(layout.prefix)/bin is not on PATH") }
        let start = "systemctl --user daemon-reload && systemctl --user enable --now bgtaskd"
        guard enable else {
            print("to run the scheduler as a user service: \(start)")
            return
        }
        for arguments in [["--user", "daemon-reload"], ["--user", "enable", "--now", "bgtaskd"]] {
            do {
                _ = try ToolRun.output(of: "/usr/bin/env", ["systemctl"] + arguments)
            } catch let failure as InstallFailure {
                throw InstallFailure("installed, but not enabled: \(failure.description)", exitCode: BGCtl.Exit.refused)
            }
        }
        print("enabled and started bgtaskd.service: systemctl --user status bgtaskd")
    }

    /// The folder the running bgctl lives in, which must hold bgtaskd and bgtop too.
    static func programFolder() throws -> String {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            throw InstallFailure("cannot find the running bgctl (/proc/self/exe)")
        }
        let folder = PathText.parent(executable)
        for program in InstallLayout.programs where !FileManager.default.isExecutableFile(atPath: "\(folder)/\(program)") {
            throw InstallFailure("\(program) is not beside bgctl in \(folder): build all three (swift build -c release) first")
        }
        return folder
    }
}
