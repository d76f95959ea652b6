import FoundationEssentials
import TaskState

/// Something the runtime carries out because of a decision of the core, in the order given.
///
/// Every entry point of the core that decides more than state returns these: ``SchedulerState/apply(_:now:)``
/// in ``CommandResult/effects``, ``SchedulerState/effectsOfTime(at:busyTransfers:)`` for a turn,
/// ``SchedulerState/expire(at:)`` and ``SchedulerState/takeOverProcesses(found:now:isAlive:)``.
/// The runtime decides nothing about them, only how: signals at once, kills and transfer attempts
/// once the state that announces them is committed.
public enum SchedulerEffect: Sendable, Equatable {
    /// Start the app's process for the plan's requests, or hand them to its running process.
    case launch(LaunchPlan)
    /// Tell the app its task expired: the manifest's expiration signal, to the process, at once.
    case notifyExpiration(pid: Int32, signal: String, tasks: [TaskKey])
    /// The grace period is over: kill the launch's process group (or the process, for a finishing
    /// task's), once the decision is committed.
    case kill(pid: Int32, processGroup: Int32?, tasks: [TaskKey])
    /// Start, pause or cancel a transfer attempt, once the state is committed.
    case transfer(TransferAction)
    /// A finishing task began for `pid`: hold the process the runtime vetted and watch its exit.
    case superviseFinishing(TaskKey, pid: Int32)
    /// A process attached to `app`: learn who it is (the vetted process), hold it, watch its exit.
    case superviseAttachment(app: Identifier, pid: Int32)
    /// Signal what is left of a finished launch (each process only while it is the one that
    /// started at its recorded time), once the decision is committed.
    case endLeftover(launchID: String, members: [LeftoverEnding.Member], signal: String)
}

extension SchedulerState {
    /// What time alone decides at `now`, in the order the runtime carries it out: expiration
    /// signals and kills, due launches (the policy's, then those for background sessions' events),
    /// and transfer attempts to start. `busyTransfers` are attempts the runtime still runs.
    public mutating func effectsOfTime(at now: Date, busyTransfers: Set<TaskKey> = []) -> [SchedulerEffect] {
        var effects = expire(at: now) + enforceVoIPReports(at: now)
        // Likelihoods age with time even without new uses.
        if usageModels.values.contains(where: { now.timeIntervalSince($0.builtAt) >= 3600 }) { rebuildUsageModels(now: now) }
        expireHeldPushes(at: now)
        dropUndeliverablePushes(now: now)
        // Before launches: a question may need one (`willBeginDelayedRequest`).
        askDelayedRequests(at: now, busy: busyTransfers)
        let plans = addingPushDeliveries(to: dueLaunches(at: now), at: now)
        effects += (plans + dueSessionLaunches(at: now, excluding: Set(plans.map(\.app)))).map(SchedulerEffect.launch)
        forgetFinishedTransfers(at: now)
        effects += dueTransfers(at: now, busy: busyTransfers).map(SchedulerEffect.transfer)
        return effects
    }
}
