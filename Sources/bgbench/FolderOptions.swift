import ArgumentParser
import Foundation

/// Where a benchmark makes its private folder, and whether it keeps it: the options every
/// subcommand of bgbench shares.
struct FolderOptions: ParsableArguments {
    @Option(help: "Folder in which to create the benchmark's own folder (default: $TMPDIR, else /tmp).")
    var directory: String?

    @Flag(help: "Keep the benchmark's folder (state, logs, databases) instead of removing it.")
    var keep = false

    /// Makes the private folder; Ctrl-C or SIGTERM removes it, unless it is kept.
    func makeWorkspace() throws -> Workspace {
        let workspace = try Workspace(parent: Workspace.parent(directory))
        Interruption.register(root: keep ? nil : workspace.root)
        return workspace
    }

    /// At the end: removes the folder, or says where it was kept.
    func finish(_ workspace: Workspace) {
        if keep { Console.line("kept \(workspace.root)") } else { workspace.remove() }
    }
}
