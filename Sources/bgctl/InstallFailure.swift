import ArgumentParser

/// Why `bgctl install` or `bgctl uninstall` stopped: one line for stderr, and the exit code
/// (4 when a place cannot be written or read, 1 when the command refuses, as for a unit that
/// differs).
struct InstallFailure: Error, CustomStringConvertible {
    var description: String
    var exitCode: ExitCode

    init(_ description: String, exitCode: ExitCode = BGCtl.Exit.localFailure) {
        self.description = description
        self.exitCode = exitCode
    }
}
