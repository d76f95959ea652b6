import FoundationEssentials

/// The command line that opens the feed of one host: the ssh command (`$BGTOP_SSH_COMMAND`, like
/// git's `GIT_SSH_COMMAND`, run by `/bin/sh` so it may carry options and quotes; default `ssh`),
/// then bgtop's own options, the host, and the remote `bgctl watch --json`, each word quoted for
/// the remote shell.
///
/// bgtop's options come after the user's, and ssh takes the first value of each option: a
/// `BGTOP_SSH_COMMAND="ssh -o BatchMode=no"` wins. `BatchMode=yes` because the dashboard owns the
/// terminal (ssh is in a session of its own and could not ask anyway): keys, an agent or a
/// config's `IdentityFile` must do. `ServerAliveInterval` lets ssh itself notice a dead network.
struct SSHLaunch: Equatable {
    static let defaultCommand = "ssh"
    static let options = ["-T", "-o", "BatchMode=yes", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"]

    let host: String
    let executable: String
    let arguments: [String]

    /// Why `host` cannot be passed to ssh, or nil: it must not look like an option or hold spaces
    /// or control characters.
    static func problem(with host: String) -> String? {
        if host.isEmpty { return "--host needs USER@HOST or HOST" }
        if host.hasPrefix("-") { return "bad --host '\(host)': it may not start with '-'" }
        if host.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7f }) {
            return "bad --host: it may not contain spaces or control characters"
        }
        if host.count > 255 { return "bad --host: longer than 255 characters" }
        return nil
    }

    init(host: String, sshCommand: String?, remoteBgctl: String, state: String?, config: String?) {
        self.host = host
        let command = (sshCommand?.trimmed(of: [" ", "\t"])).flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultCommand
        var remote = [remoteBgctl, "watch", "--json"]
        if let state { remote += ["--state", state] }
        if let config { remote += ["--config", config] }
        executable = "/bin/sh"
        arguments = ["-c", "exec \(command) \"$@\"", "bgtop-ssh"] + Self.options + ["--", host, remote.map(Self.quoted).joined(separator: " ")]
    }

    /// `text` in single quotes for a POSIX shell.
    static func quoted(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
