import CLinuxSupport
import FoundationEssentials
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The scheduler's only way of waiting: one `poll` over a signalfd, an inotify descriptor, a
/// timerfd armed for the next deadline, and pidfds of adopted processes. Nothing wakes it that
/// the kernel did not announce.
final class KernelWait {
    /// What woke the scheduler.
    struct Wake {
        var signals: [Int32] = []
        var changes: [ChangeWatcher.Change] = []
        var timer = false
        var exitedPIDs: [Int32] = []
        /// ``requestStop()`` was called (from another thread).
        var stopRequested = false
        /// ``notify()`` was called: work from another thread (transfer events) is waiting.
        var notified = false
        /// The resource monitor's sampling timer fired.
        var samplingDue = false
        /// The service manager is due a watchdog ping or held-back counts (``ServiceNotification``).
        var serviceDue = false
        /// The system bus has messages, or sd-bus's own time limit passed (``DesktopConditionSource``).
        var busDue = false
        /// Descriptors of the command socket that are ready (``CommandSocket``).
        var commandDescriptors: [Int32] = []

        /// Only the command socket woke the loop (a client connected, sent or went away).
        var onlyCommandSocket: Bool {
            !commandDescriptors.isEmpty && signals.isEmpty && changes.isEmpty && !timer && exitedPIDs.isEmpty
                && !stopRequested && !notified && !samplingDue && !serviceDue && !busDue
        }
    }

    let watcher: ChangeWatcher
    private let signalDescriptor: Int32
    private let timerDescriptor: Int32
    /// A monotonic timer armed only while the resource monitor has launches to sample.
    private let samplingDescriptor: Int32
    /// A monotonic timer armed only when a service manager is due something (``ServiceNotification``).
    private let serviceDescriptor: Int32
    private var pidDescriptors: [Int32: Int32] = [:]
    /// A pipe another thread writes to, to stop a scheduler that runs inside another program.
    private let stopPipe: WakePipe
    /// A pipe other threads write to when they have handed the loop something.
    private let notifyPipe: WakePipe

    /// Blocks `signals` for normal delivery and reads them through a signalfd instead.
    init(signals: [Int32]) throws {
        var mask = sigset_t()
        sigemptyset(&mask)
        for signal in signals {
            sigaddset(&mask, signal)
            // An inherited SIG_IGN would make the kernel discard the signal (and, for SIGCHLD,
            // reap children behind our back) before the signalfd could see it.
            Glibc.signal(signal, SIG_DFL)
        }
        guard pthread_sigmask(SIG_BLOCK, &mask, nil) == 0 else {
            throw StateError.system(operation: "cannot block signals for", path: "bgtaskd", errno: errno)
        }
        signalDescriptor = bg_signalfd(&mask)
        guard signalDescriptor >= 0 else { throw StateError.system(operation: "cannot create signalfd for", path: "bgtaskd", errno: errno) }
        timerDescriptor = bg_timerfd_create()
        guard timerDescriptor >= 0 else { throw StateError.system(operation: "cannot create timerfd for", path: "bgtaskd", errno: errno) }
        samplingDescriptor = bg_timerfd_create_monotonic()
        guard samplingDescriptor >= 0 else { throw StateError.system(operation: "cannot create timerfd for", path: "bgtaskd", errno: errno) }
        serviceDescriptor = bg_timerfd_create_monotonic()
        guard serviceDescriptor >= 0 else { throw StateError.system(operation: "cannot create timerfd for", path: "bgtaskd", errno: errno) }
        watcher = try ChangeWatcher()
        stopPipe = try WakePipe()
        notifyPipe = try WakePipe()
    }

    /// The notify pipe, for a closure that must not hold this object.
    var notifier: WakePipe { notifyPipe }

    /// Wakes the loop with ``Wake/stopRequested`` set. Safe to call from any thread.
    func requestStop() {
        stopPipe.wake()
    }

    deinit {
        close(signalDescriptor)
        close(timerDescriptor)
        close(samplingDescriptor)
        close(serviceDescriptor)
        for descriptor in pidDescriptors.values { close(descriptor) }
    }

    /// Arms the single timer for `date`, or disarms it.
    func arm(at date: Date?) {
        Self.arm(timerDescriptor, at: date)
    }

    /// Arms the sampling timer `seconds` from now (at least a millisecond), or disarms it (`nil`).
    func armSampling(in seconds: Double?) {
        guard let seconds else {
            bg_timerfd_set_relative(samplingDescriptor, 0)
            return
        }
        let clamped = seconds.isFinite ? min(max(seconds, 0.001), 3600) : 0.001
        bg_timerfd_set_relative(samplingDescriptor, Int64(clamped * 1_000_000_000))
    }

    /// Arms the service timer for `deadline` (CLOCK_MONOTONIC seconds), or disarms it (`nil`).
    func armService(at deadline: Double?) {
        guard let deadline else {
            bg_timerfd_set_relative(serviceDescriptor, 0)
            return
        }
        let seconds = deadline - bg_monotonic_seconds()
        let clamped = seconds.isFinite ? min(max(seconds, 0.001), 3600) : 0.001
        bg_timerfd_set_relative(serviceDescriptor, Int64(clamped * 1_000_000_000))
    }

    /// Arms the absolute timerfd `timer` for `date`, or disarms it (`nil`).
    static func arm(_ timer: Int32, at date: Date?) {
        guard let date else {
            bg_timerfd_set_absolute(timer, 0, 0)
            return
        }
        // Clamped to year 9999: a far-off or NaN deadline must arm a far timer, not trap.
        let raw = date.timeIntervalSince1970
        let seconds = raw.isNaN ? 0.001 : min(max(raw, 0.001), SafeNumber.writableDates.upperBound)
        let whole = floor(seconds)
        bg_timerfd_set_absolute(timer, Int64(whole), Int64((seconds - whole) * 1_000_000_000))
    }

    /// Watches a process that is not our child (adopted after a restart) through a pidfd.
    func watchExit(of pid: Int32) {
        guard pidDescriptors[pid] == nil else { return }
        let descriptor = bg_pidfd_open(pid)
        if descriptor >= 0 { pidDescriptors[pid] = descriptor }
    }

    func stopWatchingExit(of pid: Int32) {
        if let descriptor = pidDescriptors.removeValue(forKey: pid) { close(descriptor) }
    }

    /// Sleeps until at least one source is ready and reports everything that is. `bus` is what
    /// the system bus's connection asks to be watched for (``DesktopBus/pollRequest``);
    /// `commands` the command socket's (``CommandSocket/descriptors``).
    func wait(bus: (descriptor: Int32, events: Int16, milliseconds: Int32)? = nil, commands: [Int32] = []) -> Wake {
        var poll = KernelPoll<Source>()
        poll.watch(.signals, signalDescriptor)
        poll.watch(.changes, watcher.descriptor)
        poll.watch(.timer, timerDescriptor)
        poll.watch(.sampling, samplingDescriptor)
        poll.watch(.service, serviceDescriptor)
        poll.watch(.stop, stopPipe.readEnd)
        poll.watch(.notify, notifyPipe.readEnd)
        for (pid, descriptor) in pidDescriptors { poll.watch(.exit(pid), descriptor) }
        for descriptor in commands { poll.add(.command(descriptor), descriptor) }
        if let bus {
            poll.watch(.bus, bus.descriptor)
            poll.setEvents(of: .bus, bus.events)
        }
        let ready = poll.wait(milliseconds: bus?.milliseconds ?? -1) ?? []

        var wake = Wake()
        if ready.contains(.signals) {
            while true {
                let signal = bg_signalfd_read(signalDescriptor)
                if signal <= 0 { break }
                wake.signals.append(signal)
            }
        }
        if ready.contains(.changes) { wake.changes = watcher.drain() }
        if ready.contains(.timer) {
            bg_timerfd_drain(timerDescriptor)
            wake.timer = true
        }
        if ready.contains(.sampling) {
            bg_timerfd_drain(samplingDescriptor)
            wake.samplingDue = true
        }
        if ready.contains(.service) {
            bg_timerfd_drain(serviceDescriptor)
            wake.serviceDue = true
        }
        // No source ready with a bus: sd-bus's time limit passed, and it has something to do.
        if bus != nil && (ready.contains(.bus) || ready.isEmpty) { wake.busDue = true }
        if ready.contains(.stop) { wake.stopRequested = true }
        if ready.contains(.notify) {
            notifyPipe.drain()
            wake.notified = true
        }
        for case .command(let descriptor) in ready { wake.commandDescriptors.append(descriptor) }
        for case .exit(let pid) in ready.sorted(by: { $0.order < $1.order }) {
            wake.exitedPIDs.append(pid)
            stopWatchingExit(of: pid)
        }
        return wake
    }

    /// What the loop sleeps on.
    private enum Source: Hashable {
        case signals, changes, timer, stop, notify, sampling, service, bus
        /// A watched process (by its pidfd) ended.
        case exit(Int32)
        /// The command socket's listener or a connection is readable (or hung up).
        case command(Int32)

        /// Exits are reported in pid order.
        var order: Int64 {
            if case .exit(let pid) = self { return Int64(pid) }
            return -1
        }
    }
}
