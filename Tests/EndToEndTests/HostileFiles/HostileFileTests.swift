import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 11, items 4–7: files that are not what they seem, one test per item, with the real
/// programs and a time limit on every step (see ``HostileSession``).
@Suite struct HostileFileTests {
    /// The quarantined files and their reasons (`.reason` contents by quarantined name).
    private func quarantine(_ env: TestEnvironment) -> [String: String] {
        var reasons: [String: String] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: env.paths.quarantine)) ?? [] where name.hasSuffix(".reason") {
            reasons[String(name.dropLast(".reason".count))] = try? String(contentsOfFile: "\(env.paths.quarantine)/\(name)", encoding: .utf8)
        }
        return reasons
    }

    private func running(_ start: HostileSession.Start) throws -> HostileDaemon {
        switch start {
        case .running(let daemon): return daemon
        case .refused(let status, let stderr): throw TestFailure("bgtaskd refused to start (\(status)): \(stderr)")
        }
    }

    // MARK: - 4. A FIFO anywhere

    /// Item 4: a FIFO one client renames into `inbox/new/` must not freeze a running scheduler;
    /// it is quarantined with a reason that says what it is, and the next command is applied.
    @Test func aFIFODroppedInTheInboxOfARunningSchedulerIsQuarantinedAndTheNextCommandApplied() throws {
        let env = try TestEnvironment()
        let session = try HostileSession(env)
        let daemon = try running(try session.startDaemon())
        let fifo = "\(env.paths.inboxTemporary)/0000-fifo.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        BoundedProcess.handOver(env.root)
        #expect(rename(fifo, "\(env.paths.inboxNew)/0000-fifo.json") == 0)
        let submitted = try session.roundTrip()
        #expect(submitted.status == 0, "\(submitted)")
        #expect(daemon.isRunning, "\(daemon.stderr)")
        let reasons = quarantine(env)
        #expect(reasons.values.contains { $0.hasPrefix("inbox/new/0000-fifo.json is a FIFO, not a regular file") }, "\(reasons)")
        #expect(try daemon.stop() == 0)
    }

    /// Item 4: a FIFO in place of the event log, the lock or an app's log hangs nobody: the
    /// scheduler applies commands and launches, `bgctl` and `bgtop --batch` answer, and the
    /// readers name the FIFO.
    @Test(arguments: ["events.jsonl", "daemon.lock", "logs/\(HostileSession.probeApp).log"])
    func aFIFOInPlaceOfAFileTheProgramsOpenHangsNothing(_ relative: String) throws {
        let env = try TestEnvironment("fifo\(relative)")
        let session = try HostileSession(env)
        try HostilePlanter.plant(.fifo, at: HostilePath(base: .state, relative: relative), in: env)
        let status = try session.bgctl("status")
        #expect(status.status < 128, "\(status)")
        let events = try session.bgctl("events")
        #expect(events.status < 128, "\(events)")
        if relative == "events.jsonl" { #expect(events.stderr.contains("events.jsonl is a FIFO, not a regular file"), "\(events)") }
        let batch = try session.bgtopBatch()
        #expect(batch.status < 128, "\(batch)")
        switch try session.startDaemon() {
        case .refused(let code, let stderr):
            #expect(relative == "daemon.lock" && code == 1, "\(stderr)")
            #expect(stderr.contains("daemon.lock is a FIFO, not a regular file"), "\(stderr)")
        case .running(let daemon):
            #expect(try session.roundTrip().status == 0)
            #expect(try session.bgctl("simulate-launch", "\(HostileSession.probeApp).job").status == 0)
            #expect(daemon.isRunning, "\(daemon.stderr)")
            #expect(try daemon.stop() == 0)
        }
    }

    // MARK: - 5. A symlinked per-app folder

    /// Item 5: quarantine moves the link itself, never the files it points at.
    @Test(arguments: ["requests", "tasks", "transfers"])
    func aSymlinkedPerAppFolderIsQuarantinedAsALinkAndNothingOutsideMoves(_ folder: String) throws {
        let env = try TestEnvironment("symlinkedfolder\(folder)")
        let session = try HostileSession(env)
        let outside = "\(env.root)/outside-folder"
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let victim = "\(outside)/precious.json"
        try Data("not state, and not yours\n".utf8).write(to: URL(fileURLWithPath: victim))
        try FileManager.default.createDirectory(atPath: "\(env.state)/\(folder)", withIntermediateDirectories: true)
        #expect(symlink(outside, "\(env.state)/\(folder)/\(HostilePath.app)") == 0)

        let daemon = try running(try session.startDaemon())
        #expect(try session.roundTrip().status == 0)
        #expect(FileManager.default.contents(atPath: victim) == Data("not state, and not yours\n".utf8),
                "the file outside the state directory is where it was")
        let reasons = quarantine(env)
        let entry = try #require(reasons.first { $0.key.hasSuffix("\(folder)__\(HostilePath.app)") }, "\(reasons)")
        #expect(entry.value.hasPrefix("\(folder)/\(HostilePath.app) is a symbolic link"), "\(entry.value)")
        var info = stat()
        #expect(lstat("\(env.paths.quarantine)/\(entry.key)", &info) == 0 && info.st_mode & S_IFMT == S_IFLNK,
                "the link itself was moved")
        #expect(try daemon.stop() == 0)
    }

    // MARK: - 6. An event log that cannot be appended to

    /// Item 6: the log is set aside, a new one started with a `quarantined` event saying why, and
    /// the scheduler runs on (and starts again cleanly). Mode 000 is checked as `nobody` when
    /// the tests run as root, to whom no mode is unreadable.
    @Test(arguments: [HostileKind.symlink, .directory, .modeZero, .fifo])
    func anEventLogThatCannotBeAppendedToIsSetAsideAndTheSchedulerRunsOn(_ kind: HostileKind) throws {
        let env = try TestEnvironment("eventlog\(kind)")
        let session = try HostileSession(env)
        let canary = try HostilePlanter.plant(kind, at: HostilePath(base: .state, relative: "events.jsonl"), in: env)
        let daemon = try running(try session.startDaemon())
        #expect(try session.roundTrip().status == 0)
        #expect(daemon.isRunning, "\(daemon.stderr)")
        #expect(try daemon.stop() == 0)

        var info = stat()
        #expect(lstat(env.paths.events, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "a new, regular event log")
        let first = try #require(env.events().first { $0.type == .quarantined }, "\(env.events())")
        #expect(first.reason?.hasPrefix("events.jsonl") == true, "\(first)")
        #expect(first.message.contains("set the event log aside as quarantine/"), "\(first.message)")
        #expect(quarantine(env).keys.contains { $0.hasSuffix("-events.jsonl") }, "\(quarantine(env))")
        if let canary { #expect(canary.isIntact, "the link's target is untouched") }

        let again = try running(try session.startDaemon())
        #expect(again.isRunning)
        #expect(try again.stop() == 0)
    }

    /// Item 6, while running: a log replaced by a directory under a running scheduler is set aside
    /// at the next commit, which goes through.
    @Test func anEventLogReplacedWhileRunningIsSetAsideAtTheNextCommit() throws {
        let env = try TestEnvironment()
        let session = try HostileSession(env)
        let daemon = try running(try session.startDaemon())
        #expect(unlink(env.paths.events) == 0)
        #expect(mkdir(env.paths.events, 0o700) == 0)
        BoundedProcess.handOver(env.root)
        #expect(try session.roundTrip().status == 0)
        #expect(daemon.isRunning, "\(daemon.stderr)")
        #expect(env.events().first?.type == .quarantined, "\(env.events())")
        #expect(try daemon.stop() == 0)
    }

    // MARK: - Hostile counts

    /// Review of issue 15, item 3: an app record whose counts a person set to `Int.max` is
    /// launched (the launch count saturates) and the scheduler keeps running.
    @Test func anAppRecordWithCountsAtIntMaxIsLaunchedAndTheSchedulerRunsOn() throws {
        let env = try TestEnvironment()
        let session = try HostileSession(env)
        let app = HostileSession.probeApp
        try FileManager.default.createDirectory(atPath: "\(env.state)/apps", withIntermediateDirectories: true)
        let record = #"{"enabled":true,"id":"\#(app)","killCount":9223372036854775807,"launchCount":9223372036854775807,"#
            + #""throttleLevel":9223372036854775807,"activity":{"hours":[{"hour":"9999-12-31T23:00:00.000Z","launches":9223372036854775807}]}}"#
        try Data(record.utf8).write(to: URL(fileURLWithPath: "\(env.state)/apps/\(app).json"))
        let daemon = try running(try session.startDaemon())
        #expect(try session.roundTrip().status == 0)
        let launch = try session.bgctl("simulate-launch", "\(app).job")
        #expect(launch.status == 0, "\(launch)")
        try env.waitUntil("the launch to be written to the app record") {
            let data = try StateFiles.read("\(env.state)/apps/\(app).json")
            return try JSONFormat.decode(AppRecord.self, from: data).lastLaunchAt != nil
        }
        #expect(daemon.isRunning, "\(daemon.stderr)")
        #expect(try session.roundTrip().status == 0, "the scheduler still applies commands")
        #expect(try daemon.stop() == 0)
        let saved = try JSONFormat.decode(AppRecord.self, from: try StateFiles.read("\(env.state)/apps/\(app).json"))
        #expect(saved.launchCount == .max)
        #expect(quarantine(env).isEmpty, "\(quarantine(env))")
    }

    // MARK: - 7. Quarantine reasons

    /// Item 7: each reason names the file, where it goes wrong, and what was expected.
    @Test func quarantineReasonsNameTheFileTheOffsetAndWhatWasExpected() throws {
        let env = try TestEnvironment()
        let session = try HostileSession(env)
        let app = HostilePath.app
        let files: [(String, Data, [String])] = [
            ("requests/\(app)/\(app).cut.json", Data(#"{"app":"com.example.hostile","ident"#.utf8),
             ["requests/\(app)/\(app).cut.json: not valid JSON", "ends at byte offset 35", "line 1, column 36", "unfinished string", "expected"]),
            ("requests/\(app)/\(app).nul.json", Data("{\n  \"app\" : \u{0}".utf8),
             ["requests/\(app)/\(app).nul.json: not valid JSON", "NUL byte at byte offset 12", "line 2, column 11", "expected JSON text"]),
            ("apps/\(app).json", Data(), ["apps/\(app).json: not valid JSON", "empty (0 bytes)", "expected a JSON object"]),
            ("tasks/\(app)/\(app).type.json", Data(#"{"app":"com.example.hostile","identifier":7}"#.utf8),
             ["tasks/\(app)/\(app).type.json: field 'identifier': expected a string"]),
            ("inbox/new/0000-cut.json", Data(#"{"format":1,"id":"0000-cut","#.utf8),
             ["inbox/new/0000-cut.json: not valid JSON", "ends at byte offset 28", "unfinished object", "expected"]),
        ]
        for (relative, data, _) in files {
            let path = "\(env.state)/\(relative)"
            try FileManager.default.createDirectory(atPath: StateFilesTestPath.parent(of: path), withIntermediateDirectories: true)
            try data.write(to: URL(fileURLWithPath: path))
        }
        let daemon = try running(try session.startDaemon())
        #expect(try session.roundTrip().status == 0)
        #expect(try daemon.stop() == 0)
        let reasons = quarantine(env)
        for (relative, _, fragments) in files {
            let flat = relative.replacingOccurrences(of: "/", with: "__")
            let reason = try #require(reasons.first { $0.key.hasSuffix(flat) }?.value, "\(relative) quarantined: \(reasons)")
            for fragment in fragments { #expect(reason.contains(fragment), "\(relative): \(reason)") }
            #expect(reason.split(separator: "\n").count == 1, "one line: \(reason)")
            #expect(env.events().contains { $0.reason == reason.trimmingCharacters(in: .newlines) }, "the event carries the same reason")
        }
    }
}
