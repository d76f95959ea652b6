import CLinuxSupport
import Dispatch
import FoundationEssentials
import SchedulerCore
import Synchronization
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// Sends expiration signals at the deadline, from a thread of its own.
///
/// A deadline is the contract, and the scheduler's loop cannot keep it by itself: a turn that is
/// applying a batch or waiting in its group commit's `syncfs` (which waits for every writer on the
/// filesystem) would hold the signal back. So the loop hands the alarm, after each turn, the
/// running tasks it holds a process handle for; the alarm's timerfd fires at the earliest
/// deadline, and the alarm rewrites the due tasks' files as `expiring` (atomically, without a
/// sync: an app woken by the signal reads it so) and signals each process through a pidfd of its
/// own. The loop then takes what fired and expires those tasks in its state as of the moment they
/// fired, and its group commit makes that durable. A crash in between leaves the deadline past in
/// the committed state, so the next scheduler expires the task at once.
///
/// Whichever of the two threads reaches a task first claims it (under one lock), so a task is
/// signalled once. Idle, the thread sleeps in `poll` with its timer disarmed.
final class ExpiryAlarm: Sendable {
    /// A process told of an expiry, its tasks, and when.
    struct Fired: Sendable {
        var pid: Int32
        var keys: [TaskKey]
        var at: Date
    }

    private struct Schedule: Sendable {
        var tasks: [TaskKey: LaunchedTask] = [:]
        /// The alarm's own pidfd on each scheduled process.
        var descriptors: [Int32: Int32] = [:]
        var fired: [Fired] = []
        /// Tasks fired since the loop last took ``fired``.
        var firedKeys: Set<TaskKey> = []
        var stopping = false
    }

    private let paths: StatePaths
    private let graceSeconds: TimeInterval
    private let timer: Int32
    private let wakePipe: WakePipe
    private let notifier: WakePipe
    private let schedule = Mutex(Schedule())
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the thread. `notifier` wakes the scheduler's loop when something fired.
    init(paths: StatePaths, graceSeconds: TimeInterval, notifier: WakePipe) throws {
        self.paths = paths
        self.graceSeconds = graceSeconds
        self.notifier = notifier
        // Monotonic: it stops while the machine sleeps, so a budget counts awake time, and a
        // wall-clock change does not fire it (the loop moves the deadlines, then updates it).
        let timer = bg_timerfd_create_monotonic()
        guard timer >= 0 else { throw StateError.system(operation: "cannot create timerfd for", path: "expiry alarm", errno: errno) }
        self.timer = timer
        do {
            wakePipe = try WakePipe()
        } catch {
            close(timer)  // deinit does not run for an instance never wholly made
            throw error
        }
        let started = DetachedThread.spawn(name: "expiry alarm") { [self] in
            run()
            finished.signal()
        }
        guard started == 0 else { throw StateError.system(operation: "cannot start a thread for", path: "expiry alarm", errno: started) }
    }

    deinit {
        close(timer)
    }

    /// Stops the thread and closes its handles. Safe to call again.
    func stop() {
        let alreadyStopping = schedule.withLock { shared -> Bool in
            defer { shared.stopping = true }
            return shared.stopping
        }
        guard !alreadyStopping else { return }
        wakePipe.wake()
        finished.wait()
        schedule.withLock { shared in
            for descriptor in shared.descriptors.values { close(descriptor) }
            shared.descriptors.removeAll()
            shared.tasks.removeAll()
        }
    }

    /// Schedules the running tasks of `state` whose process `handles` holds, replacing the last
    /// schedule. Cheap when nothing changed.
    func update(from state: SchedulerState, handles: ProcessHandles) {
        let running = state.tasks.filter { $0.value.state == .running && handles.holds($0.value.pid) }
        schedule.withLock { shared in
            // A task that fired after the loop last took what fired is still running in `state`.
            let wanted = running.filter { !shared.firedKeys.contains($0.key) }
            guard shared.tasks.count != wanted.count || shared.tasks.contains(where: { key, task in
                wanted[key].map { $0.deadline != task.deadline || $0.pid != task.pid } ?? true
            }) else { return }
            shared.tasks = wanted
            let pids = Set(wanted.values.map(\.pid))
            for (pid, descriptor) in shared.descriptors where !pids.contains(pid) {
                close(descriptor)
                shared.descriptors[pid] = nil
            }
            for pid in pids where shared.descriptors[pid] == nil {
                shared.descriptors[pid] = handles.duplicate(pid)
            }
            arm(at: wanted.values.map(\.deadline).min())
        }
    }

    /// What fired since the last call.
    func takeFired() -> [Fired] {
        schedule.withLock { shared in
            defer {
                shared.fired.removeAll()
                shared.firedKeys.removeAll()
            }
            return shared.fired
        }
    }

    /// Takes `keys` off the schedule, for the loop to signal itself. False when the alarm already
    /// signalled one of them: the loop then must not signal again.
    func claim(_ keys: [TaskKey]) -> Bool {
        schedule.withLock { shared in
            for key in keys { shared.tasks[key] = nil }
            return keys.allSatisfy { !shared.firedKeys.contains($0) }
        }
    }

    // MARK: - The thread

    private func run() {
        var poll = KernelPoll<Int32>()
        poll.watch(timer, timer)
        poll.watch(wakePipe.readEnd, wakePipe.readEnd)
        while true {
            // Whatever woke it (the timer, a new schedule, stop), it looks at the schedule again.
            _ = poll.wait()
            bg_timerfd_drain(timer)
            wakePipe.drain()
            let (stopping, fired) = schedule.withLock { shared -> (Bool, Bool) in
                guard !shared.stopping else { return (true, false) }
                let fired = fireDue(&shared, now: Date())
                arm(at: shared.tasks.values.map(\.deadline).min())
                return (false, fired)
            }
            if stopping { return }
            if fired { notifier.wake() }
        }
    }

    /// Signals every process with a task past its deadline, once per process. Under the lock.
    private func fireDue(_ shared: inout Schedule, now: Date) -> Bool {
        let due = shared.tasks.values.filter { $0.deadline <= now }
        guard !due.isEmpty else { return false }
        let firedBefore = shared.fired.count
        for (pid, tasks) in Dictionary(grouping: due, by: \.pid).sorted(by: { $0.key < $1.key }) {
            guard let descriptor = shared.descriptors[pid] else {
                // No pidfd of its own (descriptors ran out): the loop, whose timer is armed for the
                // same deadline, signals it through its own handle.
                for task in tasks { shared.tasks[task.key] = nil }
                continue
            }
            for var task in tasks {
                shared.tasks[task.key] = nil
                shared.firedKeys.insert(task.key)
                // What the loop's expire(at: now) will make of it, so the app reads it at once.
                task.state = .expiring
                task.expiringSince = now
                task.killDeadline = now.addingTimeInterval(graceSeconds)
                task.unrecordedExpiry = true
                if let bytes = try? JSONFormat.encode(task) {
                    try? StateFiles.write(bytes, to: paths.task(task.key), durable: false)
                }
            }
            _ = bg_pidfd_send_signal(descriptor, SignalName.number(of: tasks[0].expirationSignal) ?? SIGUSR1)
            shared.fired.append(Fired(pid: pid, keys: tasks.map(\.key).sorted(), at: now))
        }
        return shared.fired.count > firedBefore
    }

    /// Arms the timer for `date` as awake time from now (a date past fires at once).
    private func arm(at date: Date?) {
        guard let date else {
            bg_timerfd_set_relative(timer, 0)
            return
        }
        let seconds = date.timeIntervalSinceNow
        let clamped = seconds.isNaN ? 0 : min(max(seconds, 0), 10 * 365 * 86_400)
        bg_timerfd_set_relative(timer, max(1, Int64(clamped * 1_000_000_000)))
    }
}
