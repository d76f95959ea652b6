import CLinuxSupport
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The processes the scheduler may signal, each held by a pidfd opened when it was launched or
/// vetted (``ProcessVetting``). Signals go through the pidfd (`pidfd_send_signal`), so a pid that
/// was reused after its process ended is never signalled, and a pid with no handle is never
/// signalled at all.
final class ProcessHandles {
    private var descriptors: [Int32: Int32] = [:]

    deinit {
        for descriptor in descriptors.values { close(descriptor) }
    }

    /// Takes a vetted process's pidfd (replacing an older handle on the same pid).
    func hold(_ process: VettedProcess) {
        if let old = descriptors.updateValue(process.pidfd, forKey: process.pid), old != process.pidfd { close(old) }
    }

    /// Opens a handle on a process the scheduler just started: its own unreaped child, so the pid
    /// cannot have been reused yet.
    func holdChild(_ pid: Int32) {
        let descriptor = bg_pidfd_open(pid)
        guard descriptor >= 0 else { return }
        hold(VettedProcess(pid: pid, pidfd: descriptor, startTicks: nil))
    }

    /// Opens a handle on a process adopted after a restart, if it is still the process that
    /// started at `startTicks` (checked after the pidfd is open, so the two are the same process).
    func holdAdopted(_ pid: Int32, startTicks: UInt64?) {
        // Without a recorded start time the process cannot be told from a later holder of its pid.
        guard pid > 1, pid != getpid(), descriptors[pid] == nil, startTicks != nil else { return }
        let descriptor = bg_pidfd_open(pid)
        guard descriptor >= 0 else { return }
        guard ProcessLauncher.isAlive(pid: pid, startTicks: startTicks), bg_pidfd_is_running(descriptor) != 0 else {
            close(descriptor)
            return
        }
        descriptors[pid] = descriptor
    }

    func holds(_ pid: Int32) -> Bool { descriptors[pid] != nil }

    /// A pidfd of its own on the held process `pid`, for another thread (``ExpiryAlarm``) to
    /// signal it through; the caller closes it.
    func duplicate(_ pid: Int32) -> Int32? {
        guard let descriptor = descriptors[pid] else { return nil }
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        return copy >= 0 ? copy : nil
    }

    /// Signals the held process `pid`. False when there is no handle or the process has ended.
    @discardableResult
    func signal(_ pid: Int32, _ signal: Int32) -> Bool {
        guard let descriptor = descriptors[pid] else { return false }
        return bg_pidfd_send_signal(descriptor, signal) == 0
    }

    /// Kills the held process `pid` and, when it leads `group`, that group with it. The group is
    /// signalled only while its id cannot belong to anyone else: while the leader runs, or while it
    /// is the scheduler's child not yet reaped (`isUnreapedChild`).
    func kill(_ pid: Int32, group: Int32?, isUnreapedChild: Bool) {
        guard let descriptor = descriptors[pid] else { return }
        if let group, group == pid, group > 1, isUnreapedChild || bg_pidfd_is_running(descriptor) != 0 {
            _ = Glibc.kill(-group, SIGKILL)
        }
        _ = bg_pidfd_send_signal(descriptor, SIGKILL)
    }

    /// Closes the handles of processes the scheduler no longer has any business with.
    func release(keeping pids: Set<Int32>) {
        for (pid, descriptor) in descriptors where !pids.contains(pid) {
            close(descriptor)
            descriptors.removeValue(forKey: pid)
        }
    }
}
