import FoundationEssentials
import Logging
import SchedulerCore
import TaskState

/// The daemon's side of ``DesktopConditionSource``: connecting once at start, and taking the
/// services' changes in the turn their messages woke.
extension SchedulerDaemon {
    /// The system bus's services, or `nil` (one line logged) when there is no system bus: the
    /// kernel's files then decide every condition, as before.
    static func connectDesktop(logger: Logger, holdsSleepInhibitor: Bool) -> DesktopConditionSource? {
        do {
            let source = try DesktopConditionSource(holdsSleepInhibitor: holdsSleepInhibitor)
            for note in source.takeNotes() { logger.info("conditions: \(TerminalText.escaped(note))") }
            return source
        } catch {
            logger.info("conditions: no system bus (\(TerminalText.escaped(error.description))); reading the kernel's files")
            return nil
        }
    }

    /// The kernel's files, with what the desktop's services said put in their place.
    static func readConditions(probe: ConditionsProbe, desktop: DesktopConditionSource?,
                               settings: SchedulerSettings) -> (ConditionsProbe.Reading, DesktopReading.Sources) {
        let files = probe.read(idleLoadAverage: settings.idleLoadAverage, lowPowerBatteryPercent: settings.lowPowerBatteryPercent)
        let services = desktop?.reading ?? DesktopReading()
        let merged = services.merged(onto: files, lowPowerBatteryPercent: settings.lowPowerBatteryPercent)
        return (merged.reading, merged.sources)
    }

    /// Handles what the bus sent; a change of what the services say is a fresh probe now.
    func takeDesktopChanges(now: Date) {
        guard let desktop else { return }
        let changed = desktop.process()
        for note in desktop.takeNotes() { logger.info("conditions: \(TerminalText.escaped(note))") }
        if changed { probeConditions(now: now) }
        for starting in desktop.sleep.takeAnnouncements() {
            if starting {
                let held = desktop.sleep.isHeld ? "; releasing the sleep inhibitor once it is written" : ""
                state.record(Event(time: now, type: .preparingForSleep, reason: "logind",
                                   message: "the machine is going to sleep: writing the state\(held)"))
            } else {
                logger.info("logind: the machine resumed from sleep")
            }
        }
    }

    /// After a commit: a sleep that waits on the scheduler may go on (the state is on disk, and
    /// the journal checkpointed, so a machine that never wakes leaves nothing to replay).
    func releaseSleepInhibitorIfDue() throws {
        guard let desktop else { return }
        if desktop.sleep.releaseIsDue { try committer.checkpoint() }
        guard desktop.sleep.releaseIfDue(syncing: paths.root) else { return }
        logger.info("logind: state written; released the sleep inhibitor")
    }
}
