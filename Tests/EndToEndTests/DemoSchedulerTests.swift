import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgtaskd --demo`, the process `bgtop --demo` runs: its readiness line, its launches, and that
/// it leaves nothing behind however it ends (SIGTERM, or the death of the process that started it).
@Suite struct DemoSchedulerTests {
    /// The line `bgtaskd --demo` printed into `output`, once it has.
    static func readiness(in output: String) throws -> DemoReadiness {
        var found: DemoReadiness?
        let deadline = Date().addingTimeInterval(30)
        while found == nil && Date() < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            found = text.split(separator: "\n").lazy.compactMap { DemoReadiness.parse($0) }.first
            if found == nil { usleep(20_000) }
        }
        return try #require(found, "no readiness line in \(output): \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")
    }

    /// The demo apps' processes the scheduler records, once at least two run.
    static func runningApps(_ readiness: DemoReadiness) throws -> [(pid: Int32, start: UInt64?)] {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let tasks = StateSnapshot.load(StatePaths(root: readiness.state)).tasks
            if tasks.count >= 2 { return tasks.map { ($0.pid, $0.processStartTicks) } }
            usleep(50_000)
        }
        throw TestFailure("the demo launched fewer than two apps within 20 s")
    }

    /// Whether `pid` still runs as the process that started at `start` (a zombie does not run).
    static func runs(_ pid: Int32, since start: UInt64?) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return false }
        let text = String(decoding: data, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return false }
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard let state = fields.first, state != "Z", state != "X" else { return false }
        return start == nil || (fields.count > 19 && UInt64(fields[19]) == start)
    }

    static func waitForNothingLeft(_ readiness: DemoReadiness, apps: [(pid: Int32, start: UInt64?)]) throws {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if !FileManager.default.fileExists(atPath: readiness.root) && !apps.contains(where: { runs($0.pid, since: $0.start) }) { return }
            usleep(50_000)
        }
        for app in apps where runs(app.pid, since: app.start) { kill(app.pid, SIGKILL) }
        try? FileManager.default.removeItem(atPath: readiness.root)
        throw TestFailure("the demo left \(readiness.root) or its apps behind")
    }

    @Test func itSaysWhereItIsRunsTheAppsAndOnSIGTERMRemovesEverything() throws {
        let env = try TestEnvironment()
        let output = env.root + "/demo.out"
        let pid = try BoundedProcess.start([TestEnvironment.binaries + "/bgtaskd", "--demo"], stdout: output, stderr: output + ".err")
        // On a failure too: SIGTERM first, so that it removes its directory and ends its apps.
        defer {
            if BoundedProcess.wait(pid, timeout: 0) == nil {
                kill(pid, SIGTERM)
                if BoundedProcess.wait(pid, timeout: 15) == nil { BoundedProcess.end(pid) }
            }
        }
        let readiness = try Self.readiness(in: output)
        #expect(readiness.state == readiness.root + "/state" && readiness.config == readiness.root + "/config")
        var info = stat()
        #expect(lstat(readiness.root, &info) == 0 && info.st_mode & 0o777 == 0o700 && info.st_uid == getuid())
        #expect(FileManager.default.fileExists(atPath: readiness.config + "/apps/com.example.backup.json"))
        let apps = try Self.runningApps(readiness)
        // Every thread blocks SIGCHLD (the servers' threads too): else the kernel may hand it to one
        // of them, and the scheduler, which reaps on its signalfd, would leave its apps as zombies.
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")
        #expect(threads.count > 1)
        for thread in threads {
            let status = try String(contentsOfFile: "/proc/\(pid)/task/\(thread)/status", encoding: .utf8)
            let blocked = status.split(separator: "\n").first { $0.hasPrefix("SigBlk:") }.flatMap { UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16) }
            #expect(blocked.map { $0 & (1 << (UInt64(SIGCHLD) - 1)) != 0 } == true, "thread \(thread): \(String(describing: blocked))")
        }
        // The terminal gets the one line; the scheduler's log goes to its file.
        #expect(try String(contentsOfFile: output + ".err", encoding: .utf8).isEmpty)
        #expect(try String(contentsOfFile: readiness.root + "/bgtaskd.log", encoding: .utf8).contains("launched"))

        kill(pid, SIGTERM)
        #expect(BoundedProcess.wait(pid, timeout: 15) == 0)
        try Self.waitForNothingLeft(readiness, apps: apps)
    }

    @Test func theDeathOfWhatStartedItEndsIt() throws {
        let env = try TestEnvironment()
        let output = env.root + "/demo.out"
        // The shell stands in for bgtop: bgtaskd --demo is its child, and it dies by SIGKILL.
        let shell = try BoundedProcess.start(["/bin/sh", "-c", "\"$0\" --demo > \"$1\" 2>&1 & wait",
                                              TestEnvironment.binaries + "/bgtaskd", output], stdout: "/dev/null", stderr: "/dev/null")
        let readiness = try Self.readiness(in: output)
        let apps = try Self.runningApps(readiness)
        BoundedProcess.end(shell)
        try Self.waitForNothingLeft(readiness, apps: apps)
    }

    /// Nobody reads its line (the reader is gone before it is ready): it stops and removes
    /// everything, rather than run a demo no one watches or die of SIGPIPE with its directory left.
    @Test func aLineNobodyReadsStopsIt() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        close(ends[0])
        let started = ProcessSpawn.start(TestEnvironment.binaries + "/bgtaskd", arguments: ["--demo"],
                                         environment: BoundedProcess.environment, stdout: ends[1], stderr: ends[1])
        close(ends[1])
        let pid = try started.get()
        let status = BoundedProcess.wait(pid, timeout: 30)
        if status == nil {
            // On a failure too: SIGTERM first, so that it removes its directory and ends its apps.
            kill(pid, SIGTERM)
            if BoundedProcess.wait(pid, timeout: 15) == nil { BoundedProcess.end(pid) }
        }
        #expect(status == 0)
        let folder = FileManager.default.temporaryDirectory.path
        let left = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("\(DemoReadiness.directoryPrefix)\(pid)-") }
        #expect(left.isEmpty, "left \(left)")
    }

    @Test func bgtopWithoutTheSchedulerBesideItSaysSoInOneLine() throws {
        let env = try TestEnvironment()
        // A copy of bgtop alone in a folder: /proc/self/exe is the copy, and no bgtaskd is beside it.
        let folder = env.root + "/alone"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: TestEnvironment.binaries + "/bgtop", toPath: folder + "/bgtop")
        let result = try BoundedProcess.run([folder + "/bgtop", "--demo", "--batch"])
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr == "bgtop: cannot start the demo: no scheduler beside bgtop (\(folder)/bgtaskd): bgtop --demo runs bgtaskd --demo; build both (swift build)\n")
        #expect(result.stdout.isEmpty)
    }

    @Test func bgtopDemoBatchShowsTheDemoAndLeavesNothing() throws {
        let result = try BoundedProcess.run([TestEnvironment.binaries + "/bgtop", "--demo", "--batch"], timeout: 60)
        #expect(result.status == 0, "\(result)")
        // The scheduler said it was ready once its first turn had applied the demo's requests.
        #expect(result.stdout.contains("6 pending") && result.stdout.contains("com.example.backup.nightly")
                && result.stdout.contains("scheduler up"), "\(result.stdout)")
        let state = try #require(result.stdout.split(separator: "\n").first?.split(separator: " ")
            .first { $0.contains(DemoReadiness.directoryPrefix) }, "\(result.stdout)")
        #expect(state.hasSuffix("/state"))
        #expect(!FileManager.default.fileExists(atPath: String(state.dropLast("/state".count))), "bgtop --demo --batch left \(state)")
    }
}
