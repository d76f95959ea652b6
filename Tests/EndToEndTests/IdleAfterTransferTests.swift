import Foundation
import LoopbackServer
import TaskState
import TestSupport
import Testing

/// The scheduler wakes zero times when idle, and carrying a transfer must not change that: once
/// the transfer is done and the threads it needed have ended, the daemon is as quiet as before.
@Suite struct IdleAfterTransferTests {
    @Test func theSchedulerWakesNoMoreAfterATransferThanBefore() async throws {
        let env = try TestEnvironment()
        let fetcher = try FetcherApp(env)
        let server = try await LoopbackServer.start()
        let daemon = try env.startDaemon()
        defer { daemon.stop() }
        // As in DaemonLifecycleTests: once a command has been applied, the scheduler is idle.
        #expect(try env.bgctl("submit", "--app", FetcherApp.id, "--id", "com.example.fetcher.refresh", "--kind", "refresh",
                              "--earliest", "+3600").status == 0)
        usleep(200_000)
        let idleThreads = Set(threadSwitches(of: daemon.pid).keys)
        let before = try await idleWindow(of: daemon.pid)

        // A trickle (several progress events, the no-progress watchdog armed throughout) that
        // ends with a completed download.
        #expect(try fetcher.download("one", server.url("/generated/300000?rate=600000")).status == 0)
        try await env.eventually("the download to complete") { fetcher.transfer("one")?.state == .completed }
        // The threads the transfer needed end some seconds after their last job. What stays: the
        // event loops that run Swift concurrency in bgtaskd (`NIO-SGLTN-…`, waiting in epoll with
        // no timer) and at most one thread of Dispatch's own (its manager, which waits the same
        // way unless a timer is due: libdispatch's once-a-second worker monitor was one).
        try await env.eventually("the transfer's threads to end", timeout: 30) {
            let left = Set(threadSwitches(of: daemon.pid).keys).subtracting(idleThreads)
            return left.filter { !threadName(daemon.pid, $0).hasPrefix("NIO-SGLTN") }.count <= 1
        }
        let after = try await idleWindow(of: daemon.pid)

        #expect(before == 0, "an idle scheduler does not wake at all")
        #expect(after == before, "context switches over two idle seconds: \(after) after the transfer, \(before) before it")
        await server.shutdown()
    }

    /// The daemon's context switches over two seconds in which no thread of it started or ended.
    ///
    /// Both readings are taken on a thread of their own with a plain sleep between them, not
    /// across a suspension: a test starved of the cooperative pool would stretch the window from
    /// two seconds to minutes, and count what the scheduler rightly does in them (a timer of its
    /// own coming due). A window the machine still stretched past 3 s is measured again.
    private func idleWindow(of pid: Int32) async throws -> Int {
        for _ in 0..<5 {
            let window: (switches: Int, seconds: Double)? = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    let clock = ContinuousClock()
                    let began = clock.now
                    let start = threadSwitches(of: pid)
                    usleep(2_000_000)
                    let end = threadSwitches(of: pid)
                    let elapsed = began.duration(to: clock.now)
                    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                    guard Set(start.keys) == Set(end.keys) else { return continuation.resume(returning: nil) }
                    continuation.resume(returning: (end.reduce(0) { $0 + $1.value - (start[$1.key] ?? 0) }, seconds))
                }
            }
            guard let window, window.seconds <= 3 else { continue }
            return window.switches
        }
        throw TestFailure("the threads of bgtaskd \(pid) kept changing, or every window took over 3 s")
    }

    private func threadName(_ pid: Int32, _ thread: String) -> String {
        (try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/comm", encoding: .utf8)) ?? ""
    }
}
