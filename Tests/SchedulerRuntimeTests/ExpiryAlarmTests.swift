import Foundation
@testable import SchedulerRuntime
import SchedulerCore
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The expiry alarm signals at the deadline on its own thread: nothing else runs in these tests,
/// as nothing would in a scheduler whose loop is stuck in a commit.
@Suite struct ExpiryAlarmTests {
    /// A real process that notes SIGUSR1 in `out` and exits.
    private func startApp(out: String) throws -> Int32 {
        try Spawn.start("/bin/bash", ["-c", "trap 'echo expired > \(out); exit 0' USR1; sleep 30 & wait $!"],
                        environment: ProcessInfo.processInfo.environment, stdout: "/dev/null", stderr: "/dev/null")
    }

    private func task(pid: Int32, deadline: Date) throws -> LaunchedTask {
        LaunchedTask(app: try Identifier(validating: "com.example.alarm"), identifier: try Identifier(validating: "com.example.alarm.work"),
                     kind: .appRefresh, launchReason: "appRefresh", simulated: false, pid: pid, processGroup: pid,
                     processStartTicks: nil, launchID: "com.example.alarm-1", startedAt: Date(), deadline: deadline)
    }

    private func stateHolding(_ task: LaunchedTask) -> SchedulerState {
        var snapshot = StateSnapshot()
        snapshot.tasks = [task]
        return SchedulerState(settings: SchedulerSettings(), catalog: ManifestCatalog(), snapshot: snapshot,
                              conditions: ConditionsRecord(probed: Conditions(), probedAt: Date()))
    }

    private func workspace() throws -> StatePaths {
        let root = FileManager.default.temporaryDirectory.path + "/bgtop-alarm-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root + "/tasks/com.example.alarm", withIntermediateDirectories: true)
        return StatePaths(root: root)
    }

    /// A real app process, an alarm holding a handle on it, and its task due in 0.3 s, scheduled.
    private func withAlarm(_ body: (StatePaths, String, Int32, ExpiryAlarm, WakePipe, LaunchedTask) throws -> Void) throws {
        let paths = try workspace()
        defer { try? FileManager.default.removeItem(atPath: paths.root) }
        let out = paths.root + "/app.out"
        let pid = try startApp(out: out)
        defer { kill(-pid, SIGKILL); _ = Spawn.wait(pid) }
        let handles = ProcessHandles()
        handles.holdChild(pid)
        let notifier = try WakePipe()
        let alarm = try ExpiryAlarm(paths: paths, graceSeconds: 5, notifier: notifier)
        defer { alarm.stop() }
        let task = try task(pid: pid, deadline: Date().addingTimeInterval(0.3))
        alarm.update(from: stateHolding(task), handles: handles)
        try body(paths, out, pid, alarm, notifier, task)
    }

    @Test func aDueTaskIsSignalledAndWrittenAsExpiringWithoutTheLoop() throws {
        try withAlarm { paths, out, pid, alarm, notifier, task in

        var ready = [pollfd(fd: notifier.readEnd, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&ready, 1, 10_000) == 1, "the alarm wakes the loop when it fires")
        #expect(!alarm.claim([task.key]), "fired and not yet taken: the loop must not signal it again")
        let fired = alarm.takeFired()
        #expect(fired.map(\.pid) == [pid] && fired.first?.keys == [task.key])
        let firedAt = try #require(fired.first?.at)
        #expect(firedAt >= task.deadline)
        let written = try JSONFormat.decode(LaunchedTask.self, from: try StateFiles.read(paths.task(task.key)))
        // The state files keep milliseconds.
        #expect(written.state == .expiring)
        #expect(written.unrecordedExpiry == true, "until the loop's commit records the expiry")
        #expect(abs((written.expiringSince ?? .distantPast).timeIntervalSince(firedAt)) < 0.001)
        #expect(abs((written.killDeadline ?? .distantPast).timeIntervalSince(firedAt.addingTimeInterval(5))) < 0.001)
        #expect(Spawn.wait(pid) == 0, "the app heard the signal and exited")
        #expect((try? String(contentsOfFile: out, encoding: .utf8)) == "expired\n")
        }
    }

    @Test func aTaskTheLoopClaimsIsNeverSignalledByTheAlarm() throws {
        try withAlarm { paths, out, pid, alarm, notifier, task in
        #expect(alarm.claim([task.key]), "claimed before it fired")

        var ready = [pollfd(fd: notifier.readEnd, events: Int16(POLLIN), revents: 0)]
        #expect(poll(&ready, 1, 1_000) == 0, "nothing fires")
        #expect(alarm.takeFired().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(processIsAlive(pid))
        }
    }
}
