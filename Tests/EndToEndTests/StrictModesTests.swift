import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// sshd's StrictModes for the config directory, with the real `bgtaskd` and `bgctl`: a config
/// directory, `apps/` or `settings.json` others could have written stops the scheduler at start
/// with one line; a manifest or program others could have written is refused with one line while
/// a good app beside it loads and launches. The tests run as root, so "someone else" is `nobody`.
@Suite struct StrictModesTests {
    /// Runs `bgtaskd` and expects it to refuse to start: exit 1 and exactly `line` on stderr. A
    /// scheduler that starts anyway is killed after a few seconds (and the test fails).
    private func expectRefusedStart(_ env: TestEnvironment, line: String) throws {
        let result = try BoundedProcess.run([TestEnvironment.binaries + "/bgtaskd", "--state", env.state, "--config", env.config],
                                            timeout: 5)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "bgtaskd: \(line)\n")
        #expect(StateLock.holder(env.paths) == nil)
    }

    @Test func aWorldWritableConfigDirectoryStopsTheScheduler() throws {
        let env = try TestEnvironment()
        #expect(chmod(env.config, 0o777) == 0)
        try expectRefusedStart(env, line: "config directory \(env.config) is writable by group or others (mode 0777); run: chmod go-w \(env.config)")
    }

    @Test func aConfigDirectoryOwnedBySomeoneElseStopsTheScheduler() throws {
        try #require(geteuid() == 0, "chown to nobody needs root")
        let env = try TestEnvironment()
        #expect(chown(env.config, 65534, 65534) == 0)
        try expectRefusedStart(env, line: "config directory \(env.config) is owned by uid 65534, not by you (uid 0) or root")
    }

    @Test func aGroupWritableAppsDirectoryStopsTheScheduler() throws {
        let env = try TestEnvironment()
        #expect(chmod(env.config + "/apps", 0o775) == 0)
        try expectRefusedStart(env, line: "apps directory \(env.config)/apps is writable by group or others (mode 0775); run: chmod go-w \(env.config)/apps")
    }

    @Test func aWorldWritableSettingsFileStopsTheScheduler() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["appRefreshBudgetSeconds": 20])
        let path = env.config + "/settings.json"
        #expect(chmod(path, 0o666) == 0)
        try expectRefusedStart(env, line: "bad settings file \(path): \(path) is writable by group or others (mode 0666); run: chmod go-w \(path)")
    }

    /// One manifest others could have written, or one naming a program that must not run.
    enum BadManifest: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case manifestOwnedByNobody, worldWritableManifest, directoryExecutable, executableWithNUL,
             relativeExecutable, worldWritableExecutable, executableOwnedByNobody

        var testDescription: String { rawValue }

        /// Makes `com.example.bad` bad in this way; returns the reason `bgctl apps` must show.
        func apply(to env: TestEnvironment) throws -> String {
            let manifest = env.config + "/apps/com.example.bad.json"
            let script = env.root + "/com.example.bad.sh"
            func rewrite(executable json: String) throws {
                let text = #"{"id": "com.example.bad", "executable": \#(json), "permittedIdentifiers": ["com.example.bad.refresh"], "backgroundModes": ["fetch"]}"#
                try Data(text.utf8).write(to: URL(fileURLWithPath: manifest))
            }
            switch self {
            case .manifestOwnedByNobody:
                try #require(chown(manifest, 65534, 65534) == 0)
                return "\(manifest) is owned by uid 65534, not by you (uid 0) or root"
            case .worldWritableManifest:
                try #require(chmod(manifest, 0o666) == 0)
                return "\(manifest) is writable by group or others (mode 0666); run: chmod go-w \(manifest)"
            case .directoryExecutable:
                try rewrite(executable: "\"\(env.root)\"")
                return "executable '\(env.root)' is a directory, not a regular file"
            case .executableWithNUL:
                // JSON's escape for NUL; C would see only the (good) script before it.
                try rewrite(executable: "\"\(script)\\u0000 --evil\"")
                return "executable '\(script)\\0 --evil' contains a NUL byte"
            case .relativeExecutable:
                try rewrite(executable: "\"com.example.bad.sh\"")
                return "executable 'com.example.bad.sh' is not an absolute path"
            case .worldWritableExecutable:
                try #require(chmod(script, 0o777) == 0)
                return "executable '\(script)' is writable by group or others (mode 0777); run: chmod go-w \(script)"
            case .executableOwnedByNobody:
                try #require(chown(script, 65534, 65534) == 0)
                return "executable '\(script)' is owned by uid 65534, not by you (uid 0) or root"
            }
        }
    }

    @Test(arguments: BadManifest.allCases)
    func aBadManifestIsRefusedWithOneLineAndAGoodOneBesideItLaunches(_ bad: BadManifest) throws {
        try #require(geteuid() == 0, "chown to nobody needs root")
        let env = try TestEnvironment()
        try env.addApp("com.example.good", identifiers: ["com.example.good.refresh"], script: "echo started >> \"$OUT\"\n")
        try env.addApp("com.example.bad", identifiers: ["com.example.bad.refresh"], script: "echo started >> \"$OUT\"\n")
        let reason = try bad.apply(to: env)
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        try env.waitUntil("the manifest error") { !env.events(.manifestError).isEmpty }
        #expect(env.events(.manifestError).map(\.message) == ["manifest com.example.bad.json: \(reason)"])
        let apps = try env.bgctl("apps")
        #expect(apps.status == 0, "\(apps)")
        let errorLines = apps.stdout.split(separator: "\n").filter { $0.contains("com.example.bad") }
        #expect(errorLines == ["com.example.bad.json: \(reason)"[...]], "\(apps.stdout)")

        let unknown = try env.bgctl("submit", "--app", "com.example.bad", "--id", "com.example.bad.refresh", "--kind", "refresh")
        #expect(unknown.status == 1)
        #expect(unknown.stderr.hasPrefix("bgctl: unknownApp: "), "\(unknown)")

        #expect(try env.bgctl("submit", "--app", "com.example.good", "--id", "com.example.good.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        let launched = try env.bgctl("simulate-launch", "com.example.good.refresh")
        #expect(launched.status == 0, "\(launched)")
        try env.waitUntil("the good app to start") { env.output(of: "com.example.good") == ["started"] }
        #expect(env.output(of: "com.example.bad").isEmpty, "the refused app never ran")
        #expect(daemon.isRunning)
    }
}
