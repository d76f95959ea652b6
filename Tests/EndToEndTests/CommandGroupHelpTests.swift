import Foundation
import TestSupport
import Testing

/// A command group named without a subcommand prints its help and exits 0, as `bgctl help` of
/// any command does; bad usage of any group, and help for a command that does not exist, is one
/// line on stderr and exit 2 (docs/cli.md).
@Suite struct CommandGroupHelpTests {
    private func bgctl(_ env: TestEnvironment, _ arguments: [String]) throws -> TestEnvironment.Result {
        try env.run(TestEnvironment.binaries + "/bgctl", arguments + ["--state", env.state, "--config", env.config])
    }

    @Test(arguments: [
        ([], "USAGE: bgctl"),
        (["transfer"], "USAGE: bgctl transfer"),
        (["usage"], "USAGE: bgctl usage"),
        (["app"], "USAGE: bgctl app"),
        (["help"], "USAGE: bgctl"),
        (["help", "transfer", "download"], "USAGE: bgctl transfer download"),
        (["help", "help"], "USAGE: bgctl"),
    ])
    func aGroupAloneShowsItsHelp(arguments: [String], usage: String) throws {
        let env = try TestEnvironment()
        let result = try bgctl(env, arguments)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdout.contains("OVERVIEW: ") && result.stdout.contains(usage), "\(result)")
        #expect(result.stderr.isEmpty, "\(result)")
        // Nothing was sent or created: help is not a command.
        #expect(!FileManager.default.fileExists(atPath: env.state + "/inbox"))
    }

    @Test(arguments: [
        ["nosuch"],
        ["--bogus"],
        ["transfer", "nosuch"],
        ["transfer", "--bogus"],
        ["transfer", "download"],
        ["usage", "import"],
        ["usage", "com.example.a", "--bogus"],
        ["app", "enable"],
        ["app", "sideways", "com.example.a"],
        ["app", "enable", "com.example.a", "--at", "2026-01-01T00:00:00Z"],
        ["conditions", "set", "power=sideways"],
        ["status", "extra"],
        ["help", "nosuch"],
        ["help", "transfer", "nosuch"],
        ["help", "status", "extra"],
        ["--config", "/nonexistent", "help", "nosuch"],
    ])
    func badUsageOfAnyGroupExitsTwoWithOneLine(arguments: [String]) throws {
        let env = try TestEnvironment()
        let result = try bgctl(env, arguments)
        #expect(result.status == 2, "\(arguments): \(result)")
        #expect(result.stderr.hasPrefix("bgctl: ") && result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result)")
        #expect(result.stdout.isEmpty, "\(arguments): \(result)")
    }
}
