import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Ends what a stopped scheduler launched, where its launches must not outlive it (`bgtaskd
/// --demo`, whose apps live in a directory removed on exit; `bgtop --demo`, after a demo scheduler
/// it had to kill). A scheduler that stops otherwise leaves its launches running, for the next one
/// to adopt.
public enum LaunchedProcessEnding {
    /// SIGKILLs every process `processes.json` names that is still the process it names (the same
    /// start time, so a reused pid is never hit), with its group when the scheduler made one.
    public static func killAll(recordedIn paths: StatePaths) {
        guard let data = try? StateFiles.read(paths.processes),
              let ledger = try? JSONFormat.decode(ProcessLedger.self, from: data) else { return }
        for entry in ledger.processes where ProcessIdentity.isAlive(pid: entry.pid, startTicks: entry.processStartTicks) {
            if let group = entry.processGroup { kill(-group, SIGKILL) } else { kill(entry.pid, SIGKILL) }
        }
        for member in (ledger.endings ?? []).flatMap(\.members)
        where ProcessIdentity.isAlive(pid: member.pid, startTicks: member.processStartTicks) {
            kill(member.pid, SIGKILL)
        }
    }
}
