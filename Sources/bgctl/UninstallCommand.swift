import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// `bgctl uninstall`: removes exactly what `bgctl install` put under a prefix and in the unit
/// folder, as its list says; state and config are the user's and stay.
struct Uninstall: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "uninstall",
        abstract: "Remove what bgctl install put in place (programs, completions, man pages, the user unit).",
        discussion: """
        Reads PREFIX/share/bgtop/installed-files and removes the files it lists, then the folders install created \
        once they are empty. The state and config directories are left alone. Stop the service first \
        (systemctl --user disable --now bgtaskd) if it was enabled.
        """)

    @Option(name: .long, help: ArgumentHelp("Where bgctl install installed (default: ~/.local).", valueName: "dir"))
    var prefix: String?

    func run() throws {
        do {
            try uninstall()
        } catch let failure as InstallFailure {
            printError(failure.description)
            throw failure.exitCode
        }
    }

    private func uninstall() throws {
        let layout = try InstallLayout(prefix: prefix, unitDirectory: nil)
        guard let list = try InstalledFiles.read(layout.manifest) else {
            throw InstallFailure("nothing installed by bgctl in \(layout.prefix) (no \(layout.manifest))", exitCode: BGCtl.Exit.refused)
        }
        // The list goes last, so that a removal that fails half-way can be run again.
        var failures: [String] = []
        var removed = 0
        for file in list.files where file != layout.manifest {
            if unlink(file) == 0 {
                removed += 1
            } else if errno != ENOENT {
                failures.append("\(file): \(String(cString: strerror(errno)))")
            }
        }
        guard failures.isEmpty else {
            throw InstallFailure("cannot remove \(failures[0])\(failures.count > 1 ? " (and \(failures.count - 1) more)" : "")")
        }
        if unlink(layout.manifest) != 0 && errno != ENOENT {
            throw InstallFailure("cannot remove \(layout.manifest): \(String(cString: strerror(errno)))")
        }
        // Deepest first; a folder that holds something else now is the user's and stays.
        var kept: [String] = []
        for directory in list.directories.sorted(by: { $0.count > $1.count }) where rmdir(directory) != 0 && errno != ENOENT {
            kept.append(directory)
        }
        print("removed \(removed + 1) files installed in \(layout.prefix)")
        for directory in kept { print("kept \(directory): not empty") }
    }
}
