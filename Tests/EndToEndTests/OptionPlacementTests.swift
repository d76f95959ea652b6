import Foundation
import TestSupport
import Testing
import TaskState

/// `--state` and `--config` go before the subcommand as well as after it, for every subcommand,
/// nested ones too. Each run has an empty `HOME` and no location variables, so an option that
/// was dropped would send `bgctl` to a default directory with nothing in it.
@Suite struct OptionPlacementTests {
    /// Runs `bgctl --state S --config C <arguments>`.
    private func bgctlFirst(_ env: TestEnvironment, _ arguments: String...) throws -> TestEnvironment.Result {
        let home = env.root + "/home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        return try env.run(TestEnvironment.binaries + "/bgctl", ["--state", env.state, "--config", env.config] + arguments,
                           environment: ["HOME": home, "XDG_STATE_HOME": "", "XDG_CONFIG_HOME": ""])
    }

    @Test func locationsBeforeTheSubcommandReachEverySubcommand() throws {
        let env = try TestEnvironment()
        let app = "com.example.placed"
        try env.addApp(app, identifiers: ["\(app).refresh", "\(app).work"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let status = try bgctlFirst(env, "status")
        #expect(status.status == 0, "\(status)")
        #expect(status.stdout.contains("scheduler: running (pid \(daemon.pid))"), "\(status)")
        #expect(status.stdout.contains("state: \(env.state)") && status.stdout.contains("config: \(env.config)"), "\(status)")

        let submit = try bgctlFirst(env, "submit", "--app", app, "--id", "\(app).refresh", "--kind", "refresh", "--earliest", "+3600")
        #expect(submit.status == 0, "\(submit)")
        let list = try bgctlFirst(env, "list", "--json")
        #expect(list.status == 0 && list.stdout.contains("\"\(app).refresh\""), "\(list)")

        let apps = try bgctlFirst(env, "apps")
        #expect(apps.status == 0 && apps.stdout.contains(app), "\(apps)")
        let events = try bgctlFirst(env, "events")
        #expect(events.status == 0 && events.stdout.contains("daemonStarted"), "\(events)")
        let conditions = try bgctlFirst(env, "conditions")
        #expect(conditions.status == 0 && conditions.stdout.contains("power="), "\(conditions)")
        let used = try bgctlFirst(env, "app", "used", app)
        #expect(used.status == 0, "\(used)")
        let usage = try bgctlFirst(env, "usage", app, "--json")
        let report = try JSONSerialization.jsonObject(with: Data(usage.stdout.utf8)) as? [String: Any]
        #expect(usage.status == 0 && report?["uses"] as? Int == 1, "\(usage)")

        // A nested subcommand: the group between the options and the leaf does not stop them.
        let download = try bgctlFirst(env, "transfer", "download", "--app", app, "--id", "\(app).file", "--earliest", "+3600",
                                      "http://127.0.0.1:9/file")
        #expect(download.status == 0, "\(download)")
        let cancel = try bgctlFirst(env, "transfer", "cancel", "--app", app, "--id", "\(app).file")
        #expect(cancel.status == 0, "\(cancel)")
        let cancelRequest = try bgctlFirst(env, "cancel", "--app", app, "--id", "\(app).refresh")
        #expect(cancelRequest.status == 0, "\(cancelRequest)")
        #expect(try env.requests().isEmpty)

        // After the subcommand still works, and both places together: the one given last counts,
        // as for any repeated option.
        let after = try env.run(TestEnvironment.binaries + "/bgctl", ["status", "--state", env.state, "--config", env.config])
        #expect(after.status == 0 && after.stdout.contains("scheduler: running (pid \(daemon.pid))"), "\(after)")
        let both = try bgctlFirst(env, "status", "--state", env.root + "/elsewhere")
        #expect(both.status == 0 && both.stdout.contains("state: \(env.root)/elsewhere"), "\(both)")
    }

    @Test func badUsageBeforeTheSubcommandIsStillBadUsage() throws {
        let env = try TestEnvironment()
        let missing = try env.run(TestEnvironment.binaries + "/bgctl", ["--state"])
        #expect(missing.status == 2, "\(missing)")
        #expect(missing.stderr.hasPrefix("bgctl: ") && missing.stderr.split(separator: "\n").count == 1, "\(missing)")
        let unknown = try env.run(TestEnvironment.binaries + "/bgctl", ["--stat", env.state, "status"])
        #expect(unknown.status == 2 && unknown.stderr == "bgctl: Unknown option '--stat'. Did you mean '--state'?\n", "\(unknown)")
    }
}
