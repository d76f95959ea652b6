import FoundationEssentials
import Logging
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// What `bgtaskd` tells a service manager that started it with `Type=notify` (systemd): `READY=1`
/// once the state is loaded, `STATUS=` with the counts when they change, `WATCHDOG=1` at half of
/// `WATCHDOG_USEC`, `STOPPING=1` when asked to stop.
///
/// It never wakes the scheduler on its own: the loop calls ``turnEnded(_:now:)`` after each turn,
/// and arms one monotonic timer for the ``nextDeadline`` it returns (a watchdog ping, or counts
/// held back by the once-a-second limit). Everything is sent from the loop thread, so a loop that
/// hangs stops the pings and the manager restarts it.
public final class ServiceNotification {
    /// The counts `STATUS=` reports.
    public struct Counts: Equatable, Sendable {
        public var pending: Int
        public var running: Int
        /// Transfers not yet finished: waiting, running or paused.
        public var transfers: Int

        public init(pending: Int, running: Int, transfers: Int) {
            self.pending = pending
            self.running = running
            self.transfers = transfers
        }

        public init(_ state: SchedulerState) {
            self.init(pending: state.requests.count, running: state.tasks.count,
                      transfers: state.transfers.values.count(where: { [.waiting, .running, .paused].contains($0.state) }))
        }

        /// The text of `STATUS=`, as `systemctl --user status bgtaskd` shows it.
        public var statusLine: String { "\(pending) pending, \(running) running, \(transfers) transfers" }
    }

    /// The environment variables of the protocol; unset once read, so launched apps do not inherit them.
    public static let environmentVariables = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]

    /// At most one `STATUS=` per this many seconds.
    static let statusInterval = 1.0

    let socket: NotifySocket
    /// Seconds between `WATCHDOG=1` pings (half of `WATCHDOG_USEC`), `nil` without a watchdog.
    public let watchdogInterval: Double?
    private let logger: Logger
    private var nextPingAt: Double?
    private var sentCounts: Counts?
    private var lastStatusAt = -Double.infinity
    /// Counts changed but not yet reported (the last report is under a second old).
    private var heldCounts = false
    private var sendFailureLogged = false

    /// A notifier for `socket`, pinging every `watchdogInterval` seconds when given.
    public init(socket: NotifySocket, watchdogInterval: Double?, logger: Logger) {
        self.socket = socket
        self.watchdogInterval = watchdogInterval
        self.logger = logger
    }

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID`, then unsets all three (as
    /// sd_notify's `unset_environment` does) so that nothing the scheduler starts inherits them.
    /// `nil` when no manager asked for notifications, or when `NOTIFY_SOCKET` is unusable (logged:
    /// the scheduler runs on without notifying).
    public static func fromEnvironment(logger: Logger) -> ServiceNotification? {
        let environment = ProcessInfo.processInfo.environment
        for name in environmentVariables { unsetenv(name) }
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        let socket: NotifySocket
        do {
            socket = try NotifySocket(name: name)
        } catch {
            logger.warning("not notifying the service manager: \(error.description)")
            return nil
        }
        return ServiceNotification(socket: socket, watchdogInterval: watchdogInterval(environment, logger: logger), logger: logger)
    }

    /// Half of `WATCHDOG_USEC`, when it is set for this process (`WATCHDOG_PID` absent or ours).
    static func watchdogInterval(_ environment: [String: String], logger: Logger) -> Double? {
        guard let text = environment["WATCHDOG_USEC"] else { return nil }
        if let pid = environment["WATCHDOG_PID"], Int32(pid) != getpid() { return nil }
        guard let microseconds = UInt64(text), microseconds > 0 else {
            logger.warning("ignoring WATCHDOG_USEC '\(text)': not a positive number of microseconds")
            return nil
        }
        return Double(microseconds) / 2_000_000
    }

    /// The state is loaded and the loop is about to wait: `READY=1` with the first counts.
    public func ready(_ counts: Counts, now: Double) {
        send("READY=1\nSTATUS=\(counts.statusLine)")
        sentCounts = counts
        lastStatusAt = now
        if let watchdogInterval { nextPingAt = now + watchdogInterval }
    }

    /// After a turn: pings the watchdog when due and reports changed counts (held back while the
    /// last report is under a second old). Returns ``nextDeadline``.
    @discardableResult
    public func turnEnded(_ counts: Counts, now: Double) -> Double? {
        if let due = nextPingAt, now >= due, let watchdogInterval {
            send("WATCHDOG=1")
            nextPingAt = now + watchdogInterval
        }
        if counts != sentCounts, now - lastStatusAt >= Self.statusInterval {
            send("STATUS=\(counts.statusLine)")
            sentCounts = counts
            lastStatusAt = now
        }
        heldCounts = counts != sentCounts
        return nextDeadline
    }

    /// When (monotonic seconds) the loop must next call ``turnEnded(_:now:)`` even if nothing
    /// else wakes it: the next ping, or the end of the second that holds back changed counts.
    public var nextDeadline: Double? {
        let statusDue = heldCounts ? lastStatusAt + Self.statusInterval : nil
        return [nextPingAt, statusDue].compactMap { $0 }.min()
    }

    /// The scheduler is stopping (SIGTERM): `STOPPING=1`, and no more pings.
    public func stopping() {
        nextPingAt = nil
        heldCounts = false
        send("STOPPING=1\nSTATUS=stopping")
    }

    /// The scheduler could not start or stopped on an error: says why in `STATUS=`.
    public func failed(_ reason: String) {
        nextPingAt = nil
        heldCounts = false
        send("STOPPING=1\nSTATUS=\(reason.replacingLiterally("\n", with: " "))")
    }

    private func send(_ message: String) {
        let code = socket.send(message)
        // A manager that is gone or slow must not stop the scheduler; one line says so.
        if code != 0 && !sendFailureLogged {
            sendFailureLogged = true
            logger.warning("cannot notify the service manager at \(socket.name): \(String(cString: strerror(code)))")
        }
    }
}
