import Foundation
import LoopbackServer
import TestSupport
import Testing
import TaskState

/// Bad input and refusals: one clear line on stderr, the contract's exit code, no state change.
@Suite struct RefusalTests {
    @Test func refusalsFromARunningSchedulerNameTheErrorAndExitOne() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.limits", identifiers: ["com.example.limits.a", "com.example.limits.b"], modes: ["fetch"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }

        let notPermitted = try env.bgctl("submit", "--app", "com.example.limits", "--id", "com.example.other", "--kind", "refresh")
        #expect(notPermitted.status == 1)
        #expect(notPermitted.stderr == "bgctl: notPermitted: com.example.other is not in com.example.limits's permittedIdentifiers\n")

        let noMode = try env.bgctl("submit", "--app", "com.example.limits", "--id", "com.example.limits.a", "--kind", "processing")
        #expect(noMode.status == 1)
        #expect(noMode.stderr.hasPrefix("bgctl: notPermitted: "))

        #expect(try env.bgctl("submit", "--app", "com.example.limits", "--id", "com.example.limits.a", "--kind", "refresh", "--earliest", "+600").status == 0)
        #expect(try env.bgctl("submit", "--app", "com.example.limits", "--id", "com.example.limits.a", "--kind", "refresh", "--earliest", "+900").status == 0,
                "the same identifier replaces")
        let tooMany = try env.bgctl("submit", "--app", "com.example.limits", "--id", "com.example.limits.b", "--kind", "refresh")
        #expect(tooMany.status == 1)
        #expect(tooMany.stderr.hasPrefix("bgctl: tooManyPendingTaskRequests: "))

        let unknownApp = try env.bgctl("submit", "--app", "com.example.nobody", "--id", "com.example.nobody.x", "--kind", "refresh")
        #expect(unknownApp.status == 1)
        #expect(unknownApp.stderr.hasPrefix("bgctl: unknownApp: "))

        #expect(try env.bgctl("app", "disable", "com.example.limits").status == 0)
        let unavailable = try env.bgctl("submit", "--app", "com.example.limits", "--id", "com.example.limits.a", "--kind", "refresh")
        #expect(unavailable.status == 1)
        #expect(unavailable.stderr == "bgctl: unavailable: background work is switched off for com.example.limits\n")

        let notRunning = try env.bgctl("simulate-expiration", "com.example.limits.a")
        #expect(notRunning.status == 1)
        #expect(notRunning.stderr == "bgctl: noSuchTask: no running task with identifier com.example.limits.a\n")

        let pending = try env.requests()
        #expect(pending.count == 1)
        #expect(pending.first?["blockers"] as? [String] == ["earliestBeginDate", "appDisabled"])
        #expect(env.events(.replaced).count == 1)
        #expect(env.events(.refused).count == 6)
    }

    // NUL cannot travel in argv; it is refused in command files (DaemonLifecycleTests) and by Identifier.
    @Test(arguments: ["../x", "/", "", "a b", String(repeating: "a", count: 129), ".hidden", "com/example"])
    func malformedIdentifiersAreBadUsage(_ bad: String) throws {
        let env = try TestEnvironment()
        let result = try env.bgctl("submit", "--app", bad, "--id", "com.example.x", "--kind", "refresh")
        #expect(result.status == 2, "\(result)")
        #expect(result.stderr.hasPrefix("bgctl: bad app: identifier"))
        #expect(result.stderr.split(separator: "\n").count == 1)
        let waiting = (try? Inbox(paths: env.paths).waiting()) ?? []
        #expect(waiting.isEmpty)
    }

    @Test func badUsageIsOneLineAndExitTwo() throws {
        let env = try TestEnvironment()
        let cases: [[String]] = [
            ["submit", "--app", "com.example.a", "--id", "com.example.a.x", "--kind", "weekly"],
            ["submit", "--app", "com.example.a", "--id", "com.example.a.x", "--kind", "refresh", "--earliest", "tomorrow"],
            ["submit", "--app", "com.example.a", "--id", "com.example.a.x", "--kind", "refresh", "--requires-power"],
            ["cancel", "--app", "com.example.a"],
            ["conditions", "set", "power=nuclear"],
            ["frobnicate"],
        ]
        for arguments in cases {
            let result = try env.run(TestEnvironment.binaries + "/bgctl", arguments + ["--state", env.state, "--config", env.config])
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.hasPrefix("bgctl: "), "\(arguments): \(result)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result)")
        }
    }

    @Test func withoutASchedulerCommandsAreCheckedThenQueuedAndSimulationsExitThree() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.offline", identifiers: ["com.example.offline.refresh"], script: "exit 0\n")

        let simulate = try env.bgctl("simulate-launch", "com.example.offline.refresh")
        #expect(simulate.status == 3)
        #expect(simulate.stderr.contains("bgtaskd is not running"))

        let refused = try env.bgctl("submit", "--app", "com.example.offline", "--id", "com.example.elsewhere", "--kind", "refresh")
        #expect(refused.status == 1)
        #expect(try Inbox(paths: env.paths).waiting().isEmpty, "a refused command is not queued")

        let queued = try env.bgctl("submit", "--app", "com.example.offline", "--id", "com.example.offline.refresh", "--kind", "refresh",
                                   "--earliest", "+600")
        #expect(queued.status == 0)
        #expect(queued.stdout.hasPrefix("queued: "))
        #expect(try Inbox(paths: env.paths).waiting().count == 1)

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // A commit writes its files before it removes the inbox files it consumed: wait for both.
        try env.waitUntil("the queued submit") { try env.requests().count == 1 && Inbox(paths: env.paths).waiting().isEmpty }
        #expect(try Inbox(paths: env.paths).waiting().isEmpty)
    }

    @Test func aStateDirectoryOpenToOthersIsRefused() throws {
        let env = try TestEnvironment()
        chmod(env.state, 0o755)
        let result = try env.run(TestEnvironment.binaries + "/bgtaskd", ["--state", env.state, "--config", env.config])
        #expect(result.status == 1)
        #expect(result.stderr == "bgtaskd: state directory \(env.state) is open to group or others (mode 0755); run: chmod 700 \(env.state)\n")
    }

    @Test func aStateDirectoryOwnedBySomeoneElseIsRefused() throws {
        let env = try TestEnvironment()
        // As root the tests can hand the directory to another user; as anyone else, a directory
        // owned by root stands in for it.
        let other: uid_t = getuid() == 0 ? 65534 : 0
        let state = getuid() == 0 ? env.state : "/root"
        if getuid() == 0 { #expect(chown(env.state, other, gid_t(other)) == 0) }
        let result = try env.run(TestEnvironment.binaries + "/bgtaskd", ["--state", state, "--config", env.config])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("bgtaskd: state directory \(state) is owned by uid \(other), not by you"), "\(result)")
        let bgctl = try env.run(TestEnvironment.binaries + "/bgctl", ["submit", "--app", "com.example.a", "--id", "com.example.a.x",
                                                                      "--kind", "refresh", "--state", state, "--config", env.config])
        #expect(bgctl.status != 0)
        #expect(bgctl.stderr.split(separator: "\n").count == 1, "\(bgctl)")
    }

    /// A real full disk: a tiny tmpfs (the tests run as root, as CI does), filled up.
    @Test func aFullDiskIsOneLineAndLeavesNoHalfWrittenCommand() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.full", identifiers: ["com.example.full.refresh"], script: "exit 0\n")
        let mountPoint = env.root + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try env.run("/bin/mount", ["-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mounting a tmpfs needs root: \(mounted)")
        defer { _ = try? env.run("/bin/umount", [mountPoint]) }
        let state = mountPoint + "/state"
        let submit = ["submit", "--app", "com.example.full", "--id", "com.example.full.refresh", "--kind", "refresh",
                      "--earliest", "+600", "--state", state, "--config", env.config]
        #expect(try env.run(TestEnvironment.binaries + "/bgctl", submit).status == 0, "room for one command")
        // Fill the file system to the last block.
        _ = try env.run("/bin/dd", ["if=/dev/zero", "of=\(mountPoint)/filler", "bs=4k"])

        let full = try env.run(TestEnvironment.binaries + "/bgctl", submit)
        #expect(full.status == 4, "\(full)")
        #expect(full.stderr.contains("No space left on device"), "\(full)")
        #expect(full.stderr.split(separator: "\n").count == 1)
        let temporary = try FileManager.default.contentsOfDirectory(atPath: state + "/inbox/tmp")
        #expect(temporary.isEmpty, "no half-written command left behind: \(temporary)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: state + "/inbox/new").count == 1, "the first command is intact")

        // The scheduler cannot start its journal on a full disk: one line, non-zero.
        let daemon = try env.run(TestEnvironment.binaries + "/bgtaskd", ["--state", state, "--config", env.config])
        #expect(daemon.status == 1, "\(daemon)")
        #expect(daemon.stderr.contains("No space left on device"), "\(daemon)")
    }

    /// A download that fills the disk: a clear, recorded error and a retry later; the scheduler
    /// keeps running and no finished file appears.
    @Test func aDownloadThatFillsTheDiskIsRecordedAndRetriedWhileTheSchedulerRunsOn() async throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.full", identifiers: ["com.example.full.refresh"], script: "exit 0\n")
        // Its retry is an hour away, so the record is seen waiting with one failure however late
        // the test looks.
        try env.writeSettings(["transferRetryInitialSeconds": 3600])
        let mountPoint = env.root + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try env.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mounting a tmpfs needs root: \(mounted)")
        defer { _ = try? env.run("/bin/umount", [mountPoint]) }
        let state = mountPoint + "/state"
        let server = try await LoopbackServer.start()
        let daemon = try Spawn.start(TestEnvironment.binaries + "/bgtaskd", ["--state", state, "--config", env.config],
                                     environment: ProcessInfo.processInfo.environment,
                                     stdout: env.root + "/d.out", stderr: env.root + "/d.err")
        defer {
            kill(daemon, SIGTERM)
            _ = Spawn.wait(daemon)
        }
        let paths = StatePaths(root: state)
        try await env.eventually("bgtaskd to start") { StateLock.holder(paths) == daemon }
        let handed = try env.run(TestEnvironment.binaries + "/bgctl",
                                 ["transfer", "download", "--app", "com.example.full", "--id", "big", server.url("/generated/8000000"),
                                  "--to", "big.bin", "--state", state, "--config", env.config])
        #expect(handed.status == 0, "\(handed)")
        let key = TaskKey(app: try Identifier(validating: "com.example.full"), identifier: try Identifier(validating: "big"))
        func record() -> TransferRecord? {
            (try? StateFiles.read(paths.transfer(key))).flatMap { try? JSONFormat.decode(TransferRecord.self, from: $0) }
        }
        try await env.eventually("the failure to be recorded") { (record()?.retries ?? 0) >= 1 }
        #expect(record()?.retries == 1, "one failed attempt")
        #expect(record()?.state == .waiting, "a full disk is retried later")
        #expect(record()?.retryAt != nil)
        #expect(record()?.lastError?.lowercased().contains("space") == true, "\(String(describing: record()?.lastError))")
        #expect(!StateFiles.exists(paths.transferPartialData(key)), "its own partial bytes were given back")
        #expect(!StateFiles.exists(paths.downloads(of: key.app) + "/big.bin"), "no finished file")
        #expect(processIsAlive(daemon), "the scheduler runs on")
        await server.shutdown()
    }

    @Test func aBadSettingsFileStopsTheSchedulerWithOneLine() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["appRefreshBudgetSeconds": -3])
        let result = try env.run(TestEnvironment.binaries + "/bgtaskd", ["--state", env.state, "--config", env.config])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("bgtaskd: bad settings file "))
        #expect(result.stderr.contains("appRefreshBudgetSeconds must be a positive number"))
    }
}

#if canImport(Glibc)
import Glibc
#endif
