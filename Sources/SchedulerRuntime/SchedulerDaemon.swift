import CLinuxSupport
import FoundationEssentials
import Logging
import SchedulerCore
import TaskState
#if canImport(Glibc)
import Glibc
#endif

/// `bgtaskd`: the only writer of the state directory.
///
/// One thread, one loop: wait on the kernel (``KernelWait``), apply what woke it (signals, inbox
/// commands, manifest changes, the timer), let the policy decide, carry out its process actions,
/// commit every change in one group commit, and arm the timer for the next deadline.
public final class SchedulerDaemon {
    /// Why the daemon cannot start.
    public enum StartError: Error, CustomStringConvertible {
        case state(String)
        case settings(SettingsError)
        case lock(StateLock.Failure)
        /// The config directory or its `apps/` could have been changed by someone else.
        case config(StateError)

        public var description: String {
            switch self {
            case .state(let message): return message
            case .config(let error): return error.description
            case .settings(let error): return "bad settings file \(error)"
            case .lock(let failure): return failure.description
            }
        }
    }

    public static let version = "0.1.0"

    let paths: StatePaths
    let configDirectory: String
    let settings: SchedulerSettings
    let logger: Logger
    let probe: ConditionsProbe
    /// The desktop's services on the system bus; `nil` without one (the files alone decide).
    let desktop: DesktopConditionSource?
    private let lock: StateLock
    let wait: KernelWait
    let committer: GroupCommit
    /// Names what is in hand, so a command that crashes the scheduler is set aside at the next start.
    let poisonGuard: PoisonGuard
    /// Inbox files of a turn whose commit crashed: each is applied again in a turn of its own.
    var suspects: Set<String> = []
    let launcher: ProcessLauncher
    /// Sends expiration signals at the deadline, whatever the loop is doing.
    let alarm: ExpiryAlarm
    /// Measures what each live launch uses (`resources.json`), only while something runs.
    let monitor: ResourceMonitor
    var transferRunner: TransferRunner!
    /// The streams of the manifests' push subscriptions.
    var pushSubscriptions: PushSubscriptionRunner!
    /// Transfer attempts to start, pause or cancel once the turn's state is committed.
    var transferActions: [TransferAction] = []
    var state: SchedulerState
    let startedAt: Date
    /// When each outcome file written is due for removal.
    var outcomeRetention = OutcomeRetention()
    var pendingOutcomes: [CommandOutcome] = []
    /// The command ids of ``pendingOutcomes``: applied, not yet committed.
    var pendingOutcomeIDs: Set<String> = []
    var consumedCommands: [String] = []
    /// The heartbeat last written to `daemon.json` (see ``DaemonHeartbeat/needsWriting(over:)``).
    var writtenHeartbeat: DaemonHeartbeat?
    /// The command socket (`control.sock`), opened when the loop starts; `nil` without one.
    var commandSocket: CommandSocket?
    /// Flushes the file system behind the commits (``WriteBehind``); started with the loop.
    var writeBehind: WriteBehind?
    /// Messages read from the command socket and not yet applied.
    var socketMessages: [CommandSocket.Message] = []
    var children: Set<Int32> = []
    /// pidfds on the processes the scheduler may signal: the only way a signal leaves it.
    let handles = ProcessHandles()
    /// Signals and kills decided this turn, carried out after the commit.
    var processActions: [SchedulerEffect] = []
    /// Processes of tasks found gone at start-up: their tasks are interrupted once the inbox is
    /// applied, so a completion written while the scheduler was down still counts.
    var goneAtStart: Set<Int32> = []
    /// Set until the commands the last scheduler left in the inbox are applied: time (expiry,
    /// kills, launches) waits for them, as it would have had the scheduler been up when they
    /// were written.
    var drainingStartupInbox = true
    /// While the inbox cannot be listed: when to try again.
    var inboxListing = InboxListingRetry()
    /// The last listing of the inbox took every command it held, and no watched folder has changed
    /// since: a turn need not list it again while `inbox/new` is the folder watched
    /// (``watchedInbox``), since a command renamed into it wakes the loop with a change. (A turn of
    /// a socket command listed an empty folder: 7 system calls of its 60.)
    var inboxListedWhole = false
    /// The folder the inbox's watch is on. A watch follows a folder, not its name: once another
    /// folder is at `inbox/new` (the first moved away or removed, its parent renamed), the inbox is
    /// listed every turn until the new one is watched.
    var watchedInbox: FileIdentity?
    /// What the scheduler watches the config's `apps` folder for: a manifest written (closed),
    /// renamed in or out, or removed. Not its creation: a manifest written in place would be read
    /// half-written and reported as a `manifestError` before the write that completes it.
    static let appsWatchMask = UInt32(IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE | IN_CLOSE_WRITE | IN_DELETE_SELF
                                      | IN_MOVE_SELF | IN_ONLYDIR)
    /// What the scheduler watches `inbox/new` for: a command renamed or written into it, and the
    /// folder itself moved or removed (a turn then sees another folder, or none, at its name).
    static let inboxWatchMask = UInt32(IN_MOVED_TO | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF | IN_ONLYDIR)
    var lastProbe: Date
    private var stopping = false
    /// The service manager that started the scheduler (`Type=notify`), if any.
    let service: ServiceNotification?
    /// Called once, after the first turn: the commands that waited in the inbox are applied
    /// (`bgtaskd --demo` then says where it is).
    public var whenReady: (() -> Void)?

    /// Takes the lock, recovers from a crash if needed, loads state and adopts live tasks.
    ///
    /// `signals` are the signals this scheduler reads: SIGCHLD always; SIGTERM, SIGINT (stop) and
    /// SIGHUP (reload manifests) only when it owns the process. A program that runs the scheduler
    /// on a thread of its own passes `[SIGCHLD]`, blocks SIGCHLD in every thread, and stops it with
    /// ``requestStop()``.
    ///
    /// The whole process becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`) and, where it may,
    /// makes a cgroup subtree for the launches under its own cgroup (``LaunchCgroups``), also when
    /// the scheduler runs on a thread of another program: orphans of its launches must come back
    /// to it to be reaped and ended. Such a program must not reap children itself.
    ///
    /// `service` is told when the scheduler is ready, what it holds, and when it stops
    /// (``ServiceNotification``); only `bgtaskd` run by a service manager has one.
    /// `holdsOffSleep`: whether it takes logind's delay inhibitor (to checkpoint before a suspend);
    /// a demo's scheduler, whose state is thrown away, does not.
    public init(stateDirectory: String, configDirectory: String, logger: Logger,
                probe: ConditionsProbe = ConditionsProbe(), signals: [Int32] = [SIGCHLD, SIGTERM, SIGINT, SIGHUP],
                now: Date = Date(), service: ServiceNotification? = nil, holdsOffSleep: Bool = true) throws(StartError) {
        paths = StatePaths(root: stateDirectory)
        self.service = service
        self.configDirectory = configDirectory
        self.logger = logger
        self.probe = probe
        startedAt = now
        lastProbe = now
        do {
            // A fresh account has no ~/.config: made private, like the state directory.
            try DirectoryCreation.create("\(configDirectory)/apps", mode: 0o700, parentMode: 0o700, named: "config directory")
            // StrictModes: refuse what others could have written before reading any of it.
            try ConfigTrust.checkDirectory(configDirectory, named: "config directory")
            try ConfigTrust.checkDirectory("\(configDirectory)/apps", named: "apps directory")
        } catch {
            throw .config(error)
        }
        do {
            settings = try SchedulerSettings.load(configDirectory: configDirectory)
        } catch {
            throw .settings(error)
        }
        do {
            try StateDirectoryCheck.prepare(paths.root)
        } catch {
            throw .state(error.description)
        }
        do {
            lock = try StateLock.acquire(paths)
        } catch {
            throw .lock(error)
        }
        let launchKey = try Self.keptLaunchKey(paths: paths, now: now)
        launcher = ProcessLauncher(paths: paths, configDirectory: configDirectory, launchKey: launchKey.key)
        // Orphans of a launch (a handler's `setsid` child whose parent exited) become the
        // scheduler's children, so that it reaps them once it has ended them. Process-wide, and
        // meant to be: on a thread of another program (`bgtop --demo`) that program becomes the
        // subreaper, or its scheduler could neither reap nor end what it launched.
        _ = bg_set_child_subreaper()
        monitor = Self.makeResourceMonitor(paths: paths, settings: settings, logger: logger)
        var recoveryEvents: [Event] = launchKey.events
        do {
            for directory in paths.directories { try StateFiles.ensureDirectory(directory) }
            // Before the journal is opened and replayed (which appends to the log).
            let setAside = SetAside(paths: paths)
            recoveryEvents += [setAside.journalIfUnusable(now: now), setAside.eventLogIfUnusable(now: now)].compactMap { $0 }
            committer = try GroupCommit(paths: paths, settings: settings)
            poisonGuard = try PoisonGuard(root: paths.root)
            try StateFiles.ensureDirectory(configDirectory)
            try StateFiles.ensureDirectory("\(configDirectory)/apps")
            wait = try KernelWait(signals: Array(Set(signals + [SIGCHLD])))
            try wait.watcher.watch(paths.inboxNew, mask: Self.inboxWatchMask)
            watchedInbox = StateFiles.identity(of: paths.inboxNew)
            try wait.watcher.watch("\(configDirectory)/apps", mask: Self.appsWatchMask)
            // What a crash left in the journal; a machine error here stops the start.
            recoveryEvents += try Self.replayJournal(committer, paths: paths, logger: logger, now: now)
            // Last: a thread that nothing could stop if the start failed after it.
            alarm = try ExpiryAlarm(paths: paths, graceSeconds: settings.expirationGraceSeconds, notifier: wait.notifier)
        } catch {
            throw .state("\(error)")
        }
        // A scheduler on a thread of another program (the demo's) holds off no suspend.
        desktop = Self.connectDesktop(logger: logger, holdsSleepInhibitor: holdsOffSleep && signals.contains(SIGTERM))
        let (reading, sources) = Self.readConditions(probe: probe, desktop: desktop, settings: settings)
        var conditions = ConditionsRecord(probed: reading.conditions, batteryPercent: reading.batteryPercent,
                                          loadAverage: reading.loadAverage, probedAt: now)
        conditions.sources = sources
        let snapshot = StateSnapshot.load(paths)
        state = SchedulerState(settings: settings, catalog: ManifestCatalog(), snapshot: snapshot, conditions: conditions)
        for file in snapshot.unreadable {
            recoveryEvents.append(quarantine(file.path, reason: file.reason, now: now))
        }
        for event in recoveryEvents { logger.warning("\(TerminalText.escaped(event.message))") }
        state.record(Event(time: now, type: .daemonStarted, pid: getpid(),
                           message: "bgtaskd \(Self.version) started (pid \(getpid())) on \(paths.root)"))
        for event in recoveryEvents { state.record(event) }
        state.updateCatalog(ManifestCatalog.load(from: "\(configDirectory)/apps"), now: now)
        let notifier = wait.notifier
        transferRunner = TransferRunner(paths: paths) { notifier.wake() }
        pushSubscriptions = PushSubscriptionRunner(paths: paths) { notifier.wake() }
        state.requeueInterruptedTransfers(now: now)
        state.recordUnrecordedExpiries()
        takeOverProcesses(now: now, lastCommitAt: snapshot.heartbeat?.updatedAt)
        outcomeRetention = OutcomeRetention.load(paths.outcomes, retentionSeconds: settings.outcomeRetentionSeconds)
        removeAbandonedInboxFiles(now: now)
        if let leftover = poisonGuard.leftover() { takeLeftover(leftover, now: now) }
        poisonGuard.reset()
        // A scheduler on a thread of another program does not own the fatal signals.
        if signals.contains(SIGTERM) { poisonGuard.noteCrashes() }
    }

    /// Runs until SIGTERM or SIGINT. Returns the exit status.
    public func run() -> Int32 {
        do {
            // Started here, not at init: a scheduler that never runs opens no stream.
            pushSubscriptions.follow(state.catalog.manifests)
            commandSocket = openCommandSocket()
            writeBehind = WriteBehind(root: paths.root)
            try turn(Date(), wake: KernelWait.Wake())
            service?.ready(ServiceNotification.Counts(state), now: bg_monotonic_seconds())
            whenReady?()
            whenReady = nil
            while !stopping {
                if let service { wait.armService(at: service.nextDeadline) }
                let wake = wait.wait(bus: desktop?.pollRequest, commands: commandSocket?.descriptors ?? [])
                receiveSocketCommands(wake.commandDescriptors)
                // A client that connected or went away without a command changes nothing: no turn.
                if wake.onlyCommandSocket && socketMessages.isEmpty { continue }
                try turn(Date(), wake: wake)
                service?.turnEnded(ServiceNotification.Counts(state), now: bg_monotonic_seconds())
            }
            service?.stopping()
            // New clients use the inbox from here; the applied commands of this turn are answered.
            commandSocket?.stop()
            alarm.stop()
            monitor.stop()
            // Running transfers stop where they are; the next scheduler resumes them.
            transferRunner.shutdown()
            applyTransferEvents(now: Date())
            // Streams end where they are; the next scheduler resumes each after its cursor.
            pushSubscriptions.shutdown()
            applyPushSubscriptionEvents()
            let now = Date()
            state.record(Event(time: now, type: .daemonStopped, pid: getpid(),
                               message: "bgtaskd stopped; \(state.tasks.count) running task(s) left to finish on their own"))
            try commit(now: now, nextWake: nil)
            try committer.checkpoint()
            writeBehind?.stop()
            logger.info("stopped")
            return 0
        } catch {
            commandSocket?.stop()
            writeBehind?.stop()
            alarm.stop()
            transferRunner.shutdown()
            pushSubscriptions.shutdown()
            let full = (error as? StateError)?.isNoSpace == true ? "the disk is full: " : ""
            logger.critical("stopping: \(full)\(error)")
            service?.failed("stopped: \(full)\(error)")
            return 1
        }
    }

    /// Asks ``run()`` to stop after its current turn. Safe from any thread.
    public func requestStop() {
        wait.requestStop()
    }

    // MARK: - One turn of the loop

    private func turn(_ now: Date, wake: KernelWait.Wake) throws {
        if !wake.changes.isEmpty { inboxListedWhole = false }
        // First: after a suspend or a clock change, running deadlines move before anything is
        // expired by them.
        state.noteClocks(ClockReading(wall: now, awake: bg_monotonic_seconds(), sinceBoot: bg_boottime_seconds()))
        // A budget that ran out is acted on before anything else the wake brought (but after the
        // inbox the last scheduler left: see `drainingStartupInbox`).
        if !drainingStartupInbox { expireDueTasks(now: now) }
        var exits: [ProcessExit] = []
        for signal in wake.signals {
            switch signal {
            case SIGCHLD: exits += reapChildren()
            case SIGHUP: reloadManifests(now: now)
            default:
                logger.info("received signal \(signal), stopping")
                stopping = true
            }
        }
        if wake.stopRequested { stopping = true }
        // A service's change is judged in this very turn, before the inbox and launches.
        if wake.busDue { takeDesktopChanges(now: now) }
        if wake.notified {
            applyTransferEvents(now: now)
            applyPushSubscriptionEvents()
        }
        exits += wake.exitedPIDs.map { ProcessExit(pid: $0, status: .unknown) }
        if wake.changes.contains(where: { $0.directory.hasSuffix("/apps") || $0.directory.isEmpty }) {
            reloadManifests(now: now)
        }
        // Awake anyway: refresh a reading that has grown old, so new requests are judged on
        // current conditions. (The timer only asks for this while a request waits on them.)
        if now.timeIntervalSince(lastProbe) >= settings.conditionsRecheckSeconds {
            probeConditions(now: now)
        }
        // Commands are taken in batches; each batch is one group commit.
        // Exits are taken once the inbox is drained: a completion a process wrote just before it
        // exited counts, instead of the exit ending its task first.
        var more = true
        while more {
            more = try applyInboxBatch(now: Date())
            // Never in one commit with inbox commands: the poison guard names one kind at a time.
            if consumedCommands.isEmpty {
                if applySocketBatch(now: Date()) { more = true }
            } else if !socketMessages.isEmpty {
                more = true
            }
            if !more {
                if !goneAtStart.isEmpty {
                    state.interruptTasks(ofGone: goneAtStart, now: now)
                    goneAtStart = []
                }
                drainingStartupInbox = false
                for exit in exits { state.processExited(pid: exit.pid, status: exit.status.description, signal: exit.status.signal, now: now) }
                exits.removeAll()
            }
            try decideAndCommit(now: Date())
        }
    }

    /// Lets the policy act on time (expiry, kills, due launches), then commits.
    func decideAndCommit(now: Date) throws {
        if !drainingStartupInbox {
            sampleResourcesIfDue(now: now)
            expireDueTasks(now: now)
            carryOut(state.effectsOfTime(at: now, busyTransfers: transferRunner.inFlight), now: now)
            // Before the commit, so that the alarm never writes the file of a task this commit
            // removes or replaces: an alarm write before this call, the commit then overwrites.
            alarm.update(from: state, handles: handles)
        }
        let plan = state.wakePlan(after: now)
        var nextWake = plan.nextWake
        if plan.isWaitingOnConditions {
            let probeAt = lastProbe.addingTimeInterval(settings.conditionsRecheckSeconds)
            nextWake = min(nextWake ?? probeAt, probeAt)
        }
        // The inbox's retry while it cannot be listed (``InboxListingRetry``).
        if let retry = inboxListing.nextTry { nextWake = min(nextWake ?? retry, retry) }
        let batchesBefore = committer.journal.batchCount
        try commit(now: now, nextWake: nextWake)
        let appended = committer.journal.batchCount != batchesBefore
        // A turn the quiet timer woke (no commit since) syncs the journal's batches.
        try committer.checkpointIfQuiet()
        // Only a turn that wrote something gives the flush anything to do.
        if appended && committer.journal.batchCount > 0 { writeBehind?.request() }
        try releaseSleepInhibitorIfDue()
        poisonGuard.clear()
        // Kills go out once the decision is on disk (the process ledger), so a crash in between
        // is carried out at the next start.
        for effect in processActions { signal(effect) }
        processActions.removeAll()
        handles.release(keeping: state.watchedPIDs.union(children))
        for action in transferActions { transferRunner.perform(action) }
        transferActions.removeAll()
        wait.arm(at: [nextWake, committer.quietCheckpointDate(now: Date())].compactMap { $0 }.min())
        armSampling()
    }
}
