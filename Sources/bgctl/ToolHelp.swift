import FoundationEssentials
import TaskState

/// What a swift-argument-parser program says about itself with `--experimental-dump-help`: the
/// library's documented `ToolInfoV0` JSON (serialization version 0), the parts a manual page uses.
///
/// Decoded here because the library's own `ArgumentParserToolInfo` module is not one of its
/// products, and its `generate-manual` tool is reachable only as a package plugin, which cannot run
/// at install time; see ``ManualPage``.
struct ToolHelp: Decodable {
    var serializationVersion: Int
    var command: Command

    struct Command: Decodable {
        var commandName: String
        var abstract: String?
        var discussion: String?
        var shouldDisplay: Bool?
        var subcommands: [Command]?
        var arguments: [Argument]?
    }

    struct Argument: Decodable {
        enum Kind: String, Decodable { case positional, option, flag }

        struct Name: Decodable {
            var kind: String
            var name: String

            /// As typed: `--long`, `-s`, or `-long` for single-dash long names.
            var spelled: String { kind == "long" ? "--\(name)" : "-\(name)" }
        }

        var kind: Kind
        var shouldDisplay: Bool
        var isOptional: Bool
        var isRepeating: Bool
        var names: [Name]?
        var preferredName: Name?
        var valueName: String?
        var defaultValue: String?
        var abstract: String?
        var discussion: String?
    }

    /// Runs `executable --experimental-dump-help` and decodes what it prints.
    static func of(_ executable: String) throws -> ToolHelp {
        let output = try ToolRun.output(of: executable, ["--experimental-dump-help"])
        do {
            let help = try JSONFormat.decode(ToolHelp.self, from: output)
            guard help.serializationVersion == 0 else {
                throw InstallFailure("\(executable) describes itself in help format \(help.serializationVersion); this bgctl reads 0")
            }
            return help
        } catch let failure as InstallFailure {
            throw failure
        } catch {
            throw InstallFailure("cannot read \(executable) --experimental-dump-help: \(error)")
        }
    }
}
