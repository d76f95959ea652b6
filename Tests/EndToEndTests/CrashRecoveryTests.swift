import Foundation
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
        try env.waitUntil("the last commit") { !FileManager.default.fileExists(atPath: env.paths.journal) }

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
        #expect(env.events(.interrupted).map(\.pid) == [pid], "\(env.events().map(\.message))")
        #expect(try env.tasks().isEmpty)
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
