import CLinuxSupport
import FoundationEssentials
import Logging
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// The loop's side of the resource monitor: sample when due, hand the samples to the core as
/// values, write `resources.json`, and keep the sampling timer armed only while something runs.
extension SchedulerDaemon {
    /// Makes the monitor: with a cgroup subtree where one can be made (and the settings allow),
    /// else from `/proc`, which the log says once.
    static func makeResourceMonitor(paths: StatePaths, settings: SchedulerSettings, logger: Logger) -> ResourceMonitor {
        guard settings.launchCgroups else {
            logger.info("resource accounting from /proc (launchCgroups is off)")
            return ResourceMonitor(stateRoot: paths.root, cgroups: nil)
        }
        switch LaunchCgroups.make() {
        case .success(let cgroups):
            logger.info("resource accounting in cgroup v2 \(cgroups.root)")
            return ResourceMonitor(stateRoot: paths.root, cgroups: cgroups)
        case .failure(let reason):
            logger.notice("resource accounting from /proc: no cgroup of its own for each launch (\(reason))")
            return ResourceMonitor(stateRoot: paths.root, cgroups: nil)
        }
    }

    /// Samples every live launch when a second has passed since the last sample, and lets the
    /// core act on it (the CPU monitor, leftovers).
    func sampleResourcesIfDue(now: Date) {
        monitor.track(state)
        guard monitor.isTracking else { return }
        let monotonic = bg_monotonic_seconds()
        guard monotonic >= monitor.nextSampleAt else { return }
        let (samples, report) = monitor.sample(now: now, monotonic: monotonic, state: state)
        writeResourceReport(report, now: now)
        carryOut(state.applyResourceSamples(samples, now: now), now: now)
    }

    /// Arms the sampling timer while any launch is tracked; otherwise disarms it.
    func armSampling() {
        monitor.track(state)
        guard monitor.isTracking else {
            wait.armSampling(in: nil)
            writeResourceReport([], now: Date())
            return
        }
        wait.armSampling(in: monitor.nextSampleAt - bg_monotonic_seconds())
    }

    /// `resources.json`, atomically and without a sync (a measurement, not state); removed when
    /// nothing runs.
    func writeResourceReport(_ launches: [LaunchResources], now: Date) {
        guard !launches.isEmpty else {
            if StateFiles.exists(paths.resources) { try? StateFiles.remove(paths.resources) }
            return
        }
        guard let bytes = try? JSONFormat.encode(ResourceReport(sampledAt: now, launches: launches)) else { return }
        try? StateFiles.write(bytes, to: paths.resources, durable: false)
    }
}
