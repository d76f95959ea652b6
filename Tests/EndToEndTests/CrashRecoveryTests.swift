import Foundation
import TestSupport
import Testing
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `kill -9` of the scheduler in the middle of work: nothing acknowledged is lost or applied
/// twice, and running apps are adopted.
@Suite struct CrashRecoveryTests {
    @Test func everyAcknowledgedSubmitIsAppliedExactlyOnceAcrossACrash() throws {
        let env = try TestEnvironment()
        let apps = (1...5).map { "com.example.burst\($0)" }
        for app in apps {
            try env.addApp(app, identifiers: (1...10).map { "\(app).job\($0)" }, script: "exit 0\n")
        }
        let daemon = try env.startDaemon()

        // Four writers submit concurrently while the scheduler is killed part-way through.
        let acknowledged = Acknowledged()
        let group = DispatchGroup()
        for (index, app) in apps.enumerated() where index < 4 {
            group.enter()
            DispatchQueue.global().async {
                defer { group.leave() }
                for job in 1...10 {
                    let id = "\(app).job\(job)"
                    if let result = try? env.bgctl("submit", "--app", app, "--id", id, "--kind", "processing", "--earliest", "+3600"),
                       result.status == 0 {
                        acknowledged.add(id)
                    }
                }
            }
        }
        try env.waitUntil("some submits to be applied") { env.events(.submitted).count >= 6 }
        daemon.crash()
        // Writers go on with no scheduler: their commands are queued.
        for job in 1...10 {
            let id = "com.example.burst5.job\(job)"
            if try env.bgctl("submit", "--app", "com.example.burst5", "--id", id, "--kind", "processing", "--earliest", "+3600").status == 0 {
                acknowledged.add(id)
            }
        }
        group.wait()

        let restarted = try env.startDaemon()
        defer { restarted.stop() }
        try env.waitUntil("the inbox to drain") { (try? Inbox(paths: env.paths).waiting().isEmpty) == true }
        try env.waitUntil("the last commit") { env.journalHoldsNoRecord }

        let ids = acknowledged.all
        #expect(ids.count == 50, "every bgctl submit was acknowledged (applied or queued)")
        let submitted = env.events(.submitted).compactMap { $0.identifier?.rawValue }
        for id in ids {
            #expect(submitted.filter { $0 == id }.count == 1, "\(id) applied exactly once")
        }
        #expect(env.events(.replaced).isEmpty)
        let pending = Set(try env.requests().compactMap { $0["identifier"] as? String })
        #expect(pending == Set(ids))
        #expect(env.events(.daemonStarted).count == 2)
    }

    @Test func aRestartedSchedulerAdoptsLiveTasksAndStillExpiresThem() throws {
        let env = try TestEnvironment()
        try env.writeSettings(["expirationGraceSeconds": 0.5])
        try env.addApp("com.example.longjob", identifiers: ["com.example.longjob.work", "com.example.longjob.other"], script: """
        echo "started $$" >> "$OUT"
        trap 'echo ignoring >> "$OUT"' USR1
        sleep 30 &
        while true; do wait; done
        """)
        let first = try env.startDaemon()
        #expect(try env.bgctl("submit", "--app", "com.example.longjob", "--id", "com.example.longjob.work", "--kind", "processing",
                              "--earliest", "+600").status == 0)
        #expect(try env.bgctl("submit", "--app", "com.example.longjob", "--id", "com.example.longjob.other", "--kind", "processing",
                              "--earliest", "+600").status == 0)
        #expect(try env.bgctl("simulate-launch", "com.example.longjob.work").status == 0)
        try env.waitUntil("the app") { env.output(of: "com.example.longjob").count == 1 }
        let pid = try #require(Int32(env.output(of: "com.example.longjob")[0].dropFirst("started ".count)))
        try env.waitUntil("the launch to be recorded") { try env.tasks().count == 1 }
        first.crash()
        #expect(processIsAlive(pid), "apps outlive a scheduler crash")

        let second = try env.startDaemon()
        defer { second.stop() }
        // The first commit writes the heartbeat before it appends its events.
        try env.waitUntil("the adoption to be logged") { !env.events(.adopted).isEmpty }
        #expect(env.events(.adopted).map(\.pid) == [pid])
        let tasks = try env.tasks()
        #expect(tasks.count == 1)
        #expect(tasks.first?["pid"] as? Int == Int(pid))
        #expect(try env.requests().count == 1, "pending requests survive the restart")

        #expect(try env.bgctl("simulate-expiration", "com.example.longjob.work").status == 0)
        try env.waitUntil("the adopted app to be killed") { !processIsAlive(pid) }
        try env.waitUntil("the kill to be recorded") { env.events(.killed).count == 1 }
        #expect(try env.tasks().isEmpty)
    }

    @Test func tasksWhoseProcessDiedDuringTheOutageAreRecordedAsInterrupted() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.short", identifiers: ["com.example.short.work"], script: """
        echo "started $$" >> "$OUT"
        sleep 30 & wait $!
        """)
        let first = try env.startDaemon()
        #expect(try env.bgctl("submit", "--app", "com.example.short", "--id", "com.example.short.work", "--kind", "refresh",
                              "--earliest", "+600").status == 0)
        #expect(try env.bgctl("simulate-launch", "com.example.short.work").status == 0)
        try env.waitUntil("the app") { env.output(of: "com.example.short").count == 1 }
        let pid = try #require(Int32(env.output(of: "com.example.short")[0].dropFirst("started ".count)))
        // The launch is committed just after the process starts; crash after that, not in between.
        try env.waitUntil("the launch to be recorded") { try env.tasks().count == 1 }
        first.crash()
        kill(-pid, SIGKILL)
        try env.waitUntil("the app to die") { !processIsAlive(pid) }

        let second = try env.startDaemon()
        defer { second.stop() }
        // The heartbeat startDaemon waits for is written before the first commit's events.
        try env.waitUntil("the interruption to be recorded") { !env.events(.interrupted).isEmpty }
        #expect(env.events(.interrupted).map(\.pid) == [pid], "\(env.events().map(\.message))")
        #expect(try env.tasks().isEmpty)
    }
}

/// What a crash can leave in `journal.json`: a whole batch (replayed) or a torn write (dropped).
@Suite struct JournalRecoveryTests {
    private func fnv1a(_ data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16)
    }

    @Test func aWholeBatchLeftInTheJournalIsReplayedOnce() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.journal", identifiers: ["com.example.journal.refresh"], script: "exit 0\n")
        let request = #"{"app":"com.example.journal","identifier":"com.example.journal.refresh","kind":"appRefresh","earliestBeginDate":"2099-01-01T00:00:00.000Z","requiresExternalPower":false,"requiresNetworkConnectivity":false,"submittedAt":"2026-11-22T10:00:00.000Z"}"#
        let event = #"{"message":"com.example.journal: submitted appRefresh request com.example.journal.refresh","time":"2026-11-22T10:00:00.000Z","type":"submitted","app":"com.example.journal","identifier":"com.example.journal.refresh"}"#
        let batch: [String: Any] = [
            "format": 1, "writes": [["path": "requests/com.example.journal/com.example.journal.refresh.json", "contents": request + "\n"]],
            "removals": [], "events": event + "\n", "eventLogOffset": 0, "consumedCommands": [],
        ]
        let body = try JSONSerialization.data(withJSONObject: batch)
        var journal = Data("bgtop-journal 1 \(body.count) \(fnv1a(body))\n".utf8)
        journal.append(body)
        try journal.write(to: URL(fileURLWithPath: env.paths.journal))

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        #expect(try env.requests().compactMap { $0["identifier"] as? String } == ["com.example.journal.refresh"])
        #expect(env.events(.submitted).count == 1)
        // The replay emptied it; the new scheduler's first commit is checkpointed once it is quiet.
        try env.waitUntil("the checkpoint after the first commit") { env.journalHoldsNoRecord }
        #expect(env.events(.submitted).count == 1)
    }

    @Test func aTornJournalIsDroppedAndItsCommandsAreStillApplied() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.torn", identifiers: ["com.example.torn.refresh"], script: "exit 0\n")
        // A command acknowledged to its writer (in inbox/new) and a journal write cut short.
        let queued = try env.bgctl("submit", "--app", "com.example.torn", "--id", "com.example.torn.refresh", "--kind", "refresh",
                                   "--earliest", "+3600")
        #expect(queued.stdout.hasPrefix("queued"))
        try Data("bgtop-journal 1 9999 0123456789abcdef\n{\"format\":1,\"wri".utf8).write(to: URL(fileURLWithPath: env.paths.journal))

        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        try env.waitUntil("the queued submit") { try env.requests().count == 1 }
        let dropped = env.events(.quarantined).filter { $0.reason == "journal" }
        #expect(dropped.count == 1)
        #expect(dropped.first?.message.contains("cut short") == true)
        let kept = try FileManager.default.contentsOfDirectory(atPath: env.paths.quarantine).filter { $0.hasSuffix("-journal.json") }
        #expect(kept.count == 1)
    }
}

/// Identifiers acknowledged by concurrent writers.
final class Acknowledged: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String] = []

    func add(_ id: String) {
        lock.lock()
        ids.append(id)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return ids
    }
}
