import ArgumentParser

/// The commands `bgctl help NAME...` names. swift-argument-parser answers a name it does not know
/// with the top-level help and exit 0, which a script cannot tell from success; bad usage is one
/// line and exit 2 everywhere else (docs/cli.md).
enum HelpTopic {
    /// The first name of `arguments` (bgctl's, without the program) that is not a command, with
    /// the commands before it (`transfer nosuch`); nil when the arguments are not `help ...` or
    /// every name is known. Options end the names; `--state` and `--config` may come before `help`.
    static func unknown(in arguments: [String]) -> String? {
        var rest = arguments[...]
        while let first = rest.first, first.hasPrefix("--state") || first.hasPrefix("--config") {
            rest = rest.dropFirst(first.contains("=") ? 1 : 2)
        }
        guard rest.first == "help" else { return nil }
        var command: any ParsableCommand.Type = BGCtl.self
        var path: [String] = []
        for name in rest.dropFirst() {
            if name.hasPrefix("-") || (path.isEmpty && name == "help") { break }
            path.append(name)
            guard let next = command.configuration.subcommands.first(where: { $0.configuration.commandName == name }) else {
                return path.joined(separator: " ")
            }
            command = next
        }
        return nil
    }
}
