import Foundation
import TaskState
import TestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `bgtaskd` under a service manager (`Type=notify`): the sd_notify(3) messages, received on a
/// datagram socket the test listens on, as systemd would.
@Suite struct ServiceNotifyTests {
    @Test func readyStatusAndStoppingReachTheNotifySocket() throws {
        let env = try TestEnvironment()
        let identifier = "com.example.notify.refresh"
        // The launched app reports what it inherited of the protocol's variables.
        try env.addApp("com.example.notify", identifiers: [identifier], script: """
        echo "socket=${NOTIFY_SOCKET-unset} watchdog=${WATCHDOG_USEC-unset}" >> "$OUT"
        "$BGCTL" complete \(identifier) --success
        """)
        let listener = try NotifyListener(path: env.root + "/notify.sock")
        let daemon = try DaemonProcess(environment: env, extra: ["NOTIFY_SOCKET": listener.name, "WATCHDOG_USEC": "600000000"])
        defer { daemon.stop() }

        let ready = try listener.next("READY=1") { $0.split(separator: "\n").contains("READY=1") }
        // Ready means loaded: the lock is held and the first commit (heartbeat, start event) is on disk.
        #expect(StateLock.holder(env.paths) == daemon.pid)
        let heartbeat = try JSONFormat.decode(DaemonHeartbeat.self, from: try StateFiles.read(env.paths.heartbeat))
        #expect(heartbeat.pid == daemon.pid)
        #expect(env.events(.daemonStarted).contains { $0.pid == daemon.pid })
        #expect(ready.split(separator: "\n").contains("STATUS=0 pending, 0 running, 0 transfers"), "\(ready)")

        #expect(try env.bgctl("submit", "--app", "com.example.notify", "--id", identifier, "--kind", "refresh", "--earliest", "+3600").status == 0)
        try listener.next("the pending request in STATUS=") { $0 == "STATUS=1 pending, 0 running, 0 transfers" }

        #expect(try env.bgctl("simulate-launch", identifier).status == 0)
        try env.waitUntil("the app to run and complete") { env.events(.completed).count == 1 }
        #expect(env.output(of: "com.example.notify") == ["socket=unset watchdog=unset"], "launched apps do not inherit the protocol's variables")
        try listener.next("the counts back at zero") { $0 == "STATUS=0 pending, 0 running, 0 transfers" }

        #expect(daemon.stop() == 0)
        listener.drain()
        try listener.next("STOPPING=1") { $0.split(separator: "\n").contains("STOPPING=1") }
        #expect(listener.messages.filter { $0.contains("READY=1") }.count == 1)
    }

    @Test func theWatchdogIsPingedAtHalfItsInterval() throws {
        let env = try TestEnvironment()
        let listener = try NotifyListener(path: env.root + "/notify.sock")
        // 200 ms: a ping every 100 ms, from the loop's own timer while it has nothing else to do.
        let daemon = try DaemonProcess(environment: env, extra: ["NOTIFY_SOCKET": listener.name, "WATCHDOG_USEC": "200000"])
        defer { daemon.stop() }
        try listener.next("READY=1") { $0.hasPrefix("READY=1") }
        for ping in 1...3 {
            try listener.next("watchdog ping \(ping)") { $0 == "WATCHDOG=1" }
        }
        #expect(daemon.stop() == 0)
        listener.drain()
        try listener.next("STOPPING=1") { $0.hasPrefix("STOPPING=1") }
    }

    @Test func aWatchdogMeantForAnotherProcessIsNotPinged() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.quiet", identifiers: ["com.example.quiet.a", "com.example.quiet.b"], script: "exit 0\n")
        let listener = try NotifyListener(path: env.root + "/notify.sock")
        // Every 25 ms, were it for this process; WATCHDOG_PID names another (init).
        let daemon = try DaemonProcess(environment: env, extra: ["NOTIFY_SOCKET": listener.name, "WATCHDOG_USEC": "50000", "WATCHDOG_PID": "1"])
        defer { daemon.stop() }
        try listener.next("READY=1") { $0.hasPrefix("READY=1") }
        // Two reports of changed counts are at least a second apart: dozens of pings' worth.
        for (count, id) in [(1, "com.example.quiet.a"), (2, "com.example.quiet.b")] {
            #expect(try env.bgctl("submit", "--app", "com.example.quiet", "--id", id, "--kind", "processing", "--earliest", "+3600").status == 0)
            try listener.next("\(count) pending") { $0 == "STATUS=\(count) pending, 0 running, 0 transfers" }
        }
        #expect(daemon.stop() == 0)
        listener.drain()
        try listener.next("STOPPING=1") { $0.hasPrefix("STOPPING=1") }
        #expect(!listener.messages.contains("WATCHDOG=1"), "\(listener.messages)")
    }

    @Test func aNotifiedSchedulerWithoutAWatchdogDoesNotWakeUp() throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.idle", identifiers: ["com.example.idle.refresh"], script: "exit 0\n")
        let listener = try NotifyListener(path: env.root + "/notify.sock")
        let daemon = try DaemonProcess(environment: env, extra: ["NOTIFY_SOCKET": listener.name])
        defer { daemon.stop() }
        try listener.next("READY=1") { $0.hasPrefix("READY=1") }
        #expect(try env.bgctl("submit", "--app", "com.example.idle", "--id", "com.example.idle.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        // Sent once the second since READY is up: after it, nothing is due but the request's timer.
        try listener.next("the new count") { $0 == "STATUS=1 pending, 0 running, 0 transfers" }
        expectNoWakeUps(of: daemon.pid)
    }

    @Test func anAbstractNotifySocketIsReached() throws {
        let env = try TestEnvironment()
        let listener = try NotifyListener(abstractName: "bgtop-notify-\(getpid())-\(UUID().uuidString.prefix(8))")
        #expect(listener.name.hasPrefix("@"))
        let daemon = try DaemonProcess(environment: env, extra: ["NOTIFY_SOCKET": listener.name])
        defer { daemon.stop() }
        try listener.next("READY=1") { $0.hasPrefix("READY=1") }
        #expect(daemon.stop() == 0)
        listener.drain()
        try listener.next("STOPPING=1") { $0.hasPrefix("STOPPING=1") }
        #expect(!listener.messages.contains("WATCHDOG=1"), "no watchdog without WATCHDOG_USEC")
    }

    @Test(arguments: ["/nonexistent-\(UUID().uuidString.prefix(8))/notify.sock", "relative/notify.sock"])
    func aNotifySocketThatCannotBeReachedDoesNotStopTheScheduler(_ socket: String) throws {
        let env = try TestEnvironment()
        try env.addApp("com.example.alone", identifiers: ["com.example.alone.refresh"], script: "exit 0\n")
        let daemon = try env.startDaemon(environment: ["NOTIFY_SOCKET": socket, "WATCHDOG_USEC": "100000"])
        defer { daemon.stop() }
        #expect(try env.bgctl("submit", "--app", "com.example.alone", "--id", "com.example.alone.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        let status = try env.bgctl("status")
        #expect(status.stdout.hasPrefix("scheduler: running (pid \(daemon.pid))"), "\(status)")
        #expect(daemon.isRunning)
        #expect(daemon.stop() == 0)
        // One line says why nothing is notified, not one per message.
        let warnings = daemon.log.split(separator: "\n").filter { $0.contains("notify") && $0.contains(socket) }
        #expect(warnings.count == 1, "\(daemon.log)")
    }
}
