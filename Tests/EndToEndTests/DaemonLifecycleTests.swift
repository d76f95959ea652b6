import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

@Suite struct DaemonLifecycleTests {
    @Test func aSecondSchedulerOnTheSameStateRefusesToStart() throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let second = try env.run(TestEnvironment.binaries + "/bgtaskd", ["--state", env.state, "--config", env.config])
        #expect(second.status == 1)
        #expect(second.stderr == "bgtaskd: another bgtaskd (pid \(daemon.pid)) is already running for \(env.state)\n")
    }

    @Test func sigtermStopsCleanlyAndStatusSaysSo() throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon()
        let up = try env.bgctl("status")
        #expect(up.stdout.hasPrefix("scheduler: running (pid \(daemon.pid))"))
        #expect(daemon.stop() == 0)
        #expect(env.events(.daemonStopped).count == 1)
        #expect(env.journalHoldsNoRecord, "no batch left in the journal")
        let down = try env.bgctl("status", "--json")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(down.stdout.utf8)) as? [String: Any])
        #expect(report["running"] as? Bool == false)
    }

    @Test func anIdleSchedulerDoesNotWakeUp() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.idle", identifiers: ["com.example.idle.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // A request an hour away: the only wake-up due is its timer.
        #expect(try env.bgctl("submit", "--app", "com.example.idle", "--id", "com.example.idle.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        expectNoWakeUps(of: daemon.pid)
    }

    @Test func garbageStateFilesAreQuarantinedWithAnEvent() throws {
        let env = try TestEnvironment()
        let directory = env.paths.requests + "/com.example.junk"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: directory + "/com.example.junk.x.json"))
        try FileManager.default.createDirectory(atPath: env.paths.inboxNew, withIntermediateDirectories: true)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: env.paths.inboxNew + "/0000000000000001-0000000000000001.json"))
        let nul = #"{"id":"0000000000000002-0000000000000002","issuedAt":"2026-11-22T10:00:00Z","type":"cancelAll","app":"a\u0000b"}"#
        try Data(nul.utf8).write(to: URL(fileURLWithPath: env.paths.inboxNew + "/0000000000000002-0000000000000002.json"))

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // Outcomes are written last, after the commit's events.
        try env.waitUntil("the inbox garbage to be handled") {
            env.events(.commandRejected).count == 2 && StateFiles.exists(env.paths.outcome("0000000000000001-0000000000000001"))
                && StateFiles.exists(env.paths.outcome("0000000000000002-0000000000000002"))
        }
        #expect(env.events(.quarantined).count == 1)
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: env.paths.quarantine)
        #expect(quarantined.filter { $0.hasSuffix(".reason") }.count == 3)
        #expect(quarantined.contains { $0.hasSuffix("requests__com.example.junk__com.example.junk.x.json") })
        #expect(!FileManager.default.fileExists(atPath: directory + "/com.example.junk.x.json"))
        let outcome = try StateFiles.read(env.paths.outcome("0000000000000001-0000000000000001"))
        #expect(String(decoding: outcome, as: UTF8.self).contains("invalidCommand"))
        let nulOutcome = String(decoding: try StateFiles.read(env.paths.outcome("0000000000000002-0000000000000002")), as: UTF8.self)
        #expect(nulOutcome.contains("NUL"), "\(nulOutcome)")
    }

    /// An id outside the documented alphabet named the outcome file: "\u{301}x" (a "/" before it is
    /// no "/" to String) made the commit write its temporary file into a missing folder, stopped the
    /// scheduler, and its journal stopped every start after. Such a command is now set aside.
    @Test func aCommandWhoseIdIsNoIdentifierIsSetAsideAndTheSchedulerRunsOn() throws {
        let env = try TestEnvironment()
        try FileManager.default.createDirectory(atPath: env.paths.inboxNew, withIntermediateDirectories: true)
        let odd = #"{"id":"\u0301x","issuedAt":"2026-11-22T10:00:00Z","type":"cancelAll","app":"com.example.a"}"#
        try Data(odd.utf8).write(to: URL(fileURLWithPath: env.paths.inboxNew + "/\u{301}x.json"))
        let kelvin = #"{"id":"K1","issuedAt":"2026-11-22T10:00:00Z","type":"cancelAll","app":"com.example.a"}"#
        try Data(kelvin.utf8).write(to: URL(fileURLWithPath: env.paths.inboxNew + "/\u{212A}1.json"))

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("both commands to be set aside") { env.events(.commandRejected).count == 2 }
        #expect(((try? StateFiles.names(in: env.paths.inboxNew)) ?? ["?"]).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: env.paths.outcome("K1")), "K1 was never applied")
        usleep(300_000)
        #expect(try env.bgctl("status").stdout.contains("scheduler: running"))
        #expect(kill(daemon.pid, 0) == 0, "the scheduler runs on")
    }

    @Test func manifestsAreReloadedWhenTheFolderChanges() throws {
        let env = try TestEnvironment()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.addApp("com.example.late", identifiers: ["com.example.late.refresh"], script: "exit 0\n")
        try env.waitUntil("the manifest to load") { env.events(.manifestLoaded).contains { $0.app?.rawValue == "com.example.late" } }
        #expect(try env.bgctl("submit", "--app", "com.example.late", "--id", "com.example.late.refresh", "--kind", "refresh",
                              "--earliest", "+60").status == 0)

        try Data(#"{"id": "com.example.broken", "executable": "relative/path", "permittedIdentifiers": [], "backgroundModes": []}"#.utf8)
            .write(to: URL(fileURLWithPath: env.config + "/apps/com.example.broken.json"))
        try env.waitUntil("the manifest error") { !env.events(.manifestError).isEmpty }
        let apps = try env.bgctl("apps")
        #expect(apps.stdout.contains("com.example.broken.json: executable 'relative/path' is not an absolute path"))
        #expect(daemon.isRunning)
    }

    @Test func eventsFollowPrintsNewEventsAsTheyHappen() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.follow", identifiers: ["com.example.follow.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        let outputPath = env.root + "/follow.out"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let follower = try Spawn.start(TestEnvironment.binaries + "/bgctl",
                                       ["events", "--follow", "--json", "--limit", "0", "--state", env.state],
                                       environment: ProcessInfo.processInfo.environment, stdout: outputPath, stderr: outputPath + ".err")
        defer {
            kill(follower, SIGTERM)
            #expect(Spawn.wait(follower) == 128 + SIGTERM, "SIGTERM ends a follower")
        }
        usleep(300_000)
        #expect(try env.bgctl("submit", "--app", "com.example.follow", "--id", "com.example.follow.refresh", "--kind", "refresh",
                              "--earliest", "+60").status == 0)
        try env.waitUntil("the follower to print the submit") {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            return text.contains(#""type":"submitted""#)
        }
    }
}

/// Expects `pid` not to wake at all over two seconds, after a moment to settle: its context
/// switches (every thread's) do not move.
func expectNoWakeUps(of pid: Int32, _ what: String = "bgtaskd", sourceLocation: SourceLocation = #_sourceLocation) {
    usleep(200_000)
    let before = contextSwitches(of: pid)
    usleep(2_000_000)
    let after = contextSwitches(of: pid)
    #expect(before > 0, sourceLocation: sourceLocation)
    #expect(after == before, "\(what) woke \(after - before) times in 2 s while idle", sourceLocation: sourceLocation)
}

/// Voluntary plus involuntary context switches of every thread of a process.
func contextSwitches(of pid: Int32) -> Int {
    threadSwitches(of: pid).values.reduce(0, +)
}

/// Voluntary plus involuntary context switches of each thread of a process, by thread id.
func threadSwitches(of pid: Int32) -> [String: Int] {
    var switches: [String: Int] = [:]
    for thread in (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? [] {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8) else { continue }
        switches[thread] = status.split(separator: "\n")
            .filter { $0.hasPrefix("voluntary_ctxt_switches") || $0.hasPrefix("nonvoluntary_ctxt_switches") }
            .reduce(0) { $0 + (Int($1.split(separator: "\t").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "") ?? 0) }
    }
    return switches
}
