import ArgumentParser
import FoundationEssentials
import TaskState

/// `--state` and `--config`, shared by every subcommand.
struct LocationOptions: ParsableArguments {
    @Option(name: .long, help: "The state directory (default: $BGTASK_STATE_DIR, else $XDG_STATE_HOME/bgtask).")
    var state: String?

    @Option(name: .long, help: "The config directory (default: $BGTASK_CONFIG_DIR, else $XDG_CONFIG_HOME/bgtask).")
    var config: String?

    var paths: StatePaths { StatePaths(root: Locations.stateDirectory(flag: state)) }
    var configDirectory: String { Locations.configDirectory(flag: config) }
    var appsDirectory: String { "\(configDirectory)/apps" }
}

/// Parses an identifier argument, or fails as bad usage with the reason.
func identifier(_ text: String, _ what: String) throws -> Identifier {
    do {
        return try Identifier(validating: text)
    } catch {
        // Escaped here: the parser keeps only a message's first line, and the text may hold a newline.
        throw ValidationError("bad \(what): \(TerminalText.escaped(error.description))")
    }
}

/// Parses a `--sha256` argument (either case), or fails as bad usage with the reason; lowercase.
func sha256Digest(_ text: String) throws -> String {
    do {
        return try SHA256Hex(validating: text).rawValue
    } catch {
        throw ValidationError("bad --sha256: \(TerminalText.escaped(error.description))")
    }
}

/// Writes JSON for `--json` output.
func printJSON<T: Encodable>(_ value: T) throws {
    StandardStreams.write(try JSONFormat.encode(value))
}
